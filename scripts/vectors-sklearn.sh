#!/usr/bin/env bash
# The density-estimation table of docs/own-data.md: ED, SM, CD and DSM
# trained by train-vectors on scikit-learn's bundled real data sets
# (Debian's python3-sklearn), read as a user's files are read, each over
# seeds; the held-out log-likelihood per row (AIS, with its evidence of
# convergence) of every run, the Gaussian baseline
# (scripts/vectors-gaussian.py) on the same splits and columns, then the table of
# each method's mean and range over the seeds with every run's AIS
# evidence (scripts/vectors-table.py).
#
#   scripts/vectors-sklearn.sh                 # seeds 1 2 3, 5000 steps
#   SEEDS="1" STEPS=500 scripts/vectors-sklearn.sh
#   DOCS=docs/results/vectors-sklearn-ais scripts/vectors-sklearn.sh
#
# Run folders go to $OUT (default /tmp/vectors-sklearn); a stopped run
# resumes when started again, and a finished one is measured again (with
# today's AIS). DOCS, when set, receives each run's results (RUN/METHOD.json,
# loglik.csv), gaussian.csv and table.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/vectors-sklearn}
data=/usr/lib/python3/dist-packages/sklearn/datasets/data
mkdir -p "$out/bin"
go build -o "$out/bin/" ./cmd/train-vectors
for seed in ${SEEDS:-1 2 3}; do
  # Exact score matching takes d backward passes a step: on the 64-d
  # digits 5,000 steps take about 7 minutes beside another job here.
  for set in "wine_data.csv 1 ed,sm,cd,dsm" "breast_cancer.csv 1 ed,sm,cd,dsm" "digits.csv.gz 0 ed,sm,cd,dsm"; do
    read -r file skip methods <<<"$set"
    nice "$out/bin/train-vectors" -data "$data/$file" -skip-rows "$skip" -label-column last -methods "$methods" \
      -seed "$seed" -steps "${STEPS:-5000}" -out "$out/${file%%.*}-s$seed" >> "$out/${file%%.*}-s$seed.log" 2>&1
    tail -n 5 "$out/${file%%.*}-s$seed.log"
  done
done
/usr/bin/python3 scripts/vectors-gaussian.py "$out"/*-s[0-9]/ > "$out/gaussian.csv"
/usr/bin/python3 scripts/vectors-table.py --gaussian "$out/gaussian.csv" "$out"/*-s[0-9]/ | tee "$out/table.md"
if [ -n "${DOCS:-}" ]; then
  for run in "$out"/*-s[0-9]; do
    mkdir -p "$DOCS/$(basename "$run")"
    cp "$run/loglik.csv" "$DOCS/$(basename "$run")/"
    for r in "$run"/*/results.json; do
      cp "$r" "$DOCS/$(basename "$run")/$(basename "$(dirname "$r")").json"
    done
  done
  cp "$out/gaussian.csv" "$out/table.md" "$DOCS/"
fi
