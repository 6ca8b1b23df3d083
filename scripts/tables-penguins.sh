#!/usr/bin/env bash
# Trains train-table's two methods on the Palmer penguins (the pip package
# palmerpenguins 0.1.6, installed into a virtual environment of its own;
# rows with a missing value dropped), classifying the species with the
# energy, and compares the synthetic rows' marginals with the data's:
# each category's share and each number's mean and deviation. Writes
# docs/results/tables/penguins-SEED.md; the run folder is RUNS/table-penguins-SEED.
#
#   scripts/tables-penguins.sh [SEED [RUNS]]
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-1}
runs=${2:-$HOME/runs}
venv=${VENV:-$HOME/.cache/edlebm-penguins-venv}
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q palmerpenguins==0.1.6; }
data=$("$venv/bin/python" -c 'import importlib.resources as r; print(r.files("palmerpenguins") / "data" / "penguins.csv")')
out=$runs/table-penguins-$seed
go build -o "$runs/bin/" ./cmd/train-table
start=$(date +%s)
"$runs/bin/train-table" -data "$data" -missing drop -target species -column year=categorical:ordinal -seed "$seed" -out "$out" >"$out.log" 2>&1
seconds=$(($(date +%s) - start))
mkdir -p docs/results/tables
/usr/bin/python3 - "$data" "$out" "$seed" "$seconds" "$(lscpu | sed -n 's/^Model name: *//p')" >"docs/results/tables/penguins-$seed.md" <<'PY'
import collections, csv, json, statistics as st, sys
data, out, seed, seconds, cpu = sys.argv[1:]
rows = [r for r in csv.DictReader(open(data)) if "NA" not in r.values()]
print("# train-table on the Palmer penguins, seed %s\n" % seed)
print("`scripts/tables-penguins.sh %s`, %s, %s s for both methods (5,000 steps each, 1,000 samples of 200 sweeps)." % (seed, cpu, seconds))
print("%d rows with no missing value; 20 %% held out.\n" % len(rows))
print("| method | species accuracy (held out) | ECE | majority's share |")
print("|---|---|---|---|")
for m in ("med", "mcd"):
    r = json.load(open("%s/%s/results.json" % (out, m)))
    print("| %s | %.4f | %.4f | %.4f |" % (m, r["target_accuracy"], r["target_ece"], r["majority_share"]))
print("\nMarginals of 1,000 synthetic rows against the data's (share of each category; mean and standard deviation of each number):\n")
print("| column | value | data | med | mcd |")
print("|---|---|---|---|---|")
samples = {m: list(csv.DictReader(open("%s/%s/samples.csv" % (out, m)))) for m in ("med", "mcd")}
for col in ("species", "island", "sex", "year"):
    d = collections.Counter(r[col] for r in rows)
    for k in sorted(d):
        got = ["%.3f" % (sum(1 for s in samples[m] if s[col] == k) / len(samples[m])) for m in ("med", "mcd")]
        print("| %s | %s | %.3f | %s | %s |" % (col, k, d[k] / len(rows), got[0], got[1]))
for col in ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"):
    def ms(v): return "%.1f ± %.1f" % (st.mean(v), st.stdev(v))
    print("| %s | mean ± sd | %s | %s | %s |" % (col, ms([float(r[col]) for r in rows]), ms([float(s[col]) for s in samples["med"]]), ms([float(s[col]) for s in samples["mcd"]])))
PY
cat "docs/results/tables/penguins-$seed.md"
