#!/usr/bin/env bash
# The density-estimation table of docs/own-data.md: ED, SM, CD and DSM
# trained by train-vectors on scikit-learn's bundled real data sets
# (Debian's python3-sklearn), read as a user's files are read, each over
# seeds; the held-out log-likelihood per row (AIS) of every run, then a
# table of each method's mean and range over the seeds, and the Gaussian
# baseline (scripts/vectors-gaussian.py) on the same splits.
#
#   scripts/vectors-sklearn.sh                 # seeds 1 2 3, 5000 steps
#   SEEDS="1" STEPS=500 scripts/vectors-sklearn.sh
#
# Run folders go to $OUT (default /tmp/vectors-sklearn); a stopped run
# resumes when started again.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/vectors-sklearn}
data=/usr/lib/python3/dist-packages/sklearn/datasets/data
mkdir -p "$out/bin"
go build -o "$out/bin/" ./cmd/train-vectors
for seed in ${SEEDS:-1 2 3}; do
  # Exact score matching takes d backward passes a step: on the 64-d
  # digits that is about 25 minutes a run here, so digits leave it out.
  for set in "wine_data.csv 1 ed,sm,cd,dsm" "breast_cancer.csv 1 ed,sm,cd,dsm" "digits.csv.gz 0 ed,cd,dsm"; do
    read -r file skip methods <<<"$set"
    nice "$out/bin/train-vectors" -data "$data/$file" -skip-rows "$skip" -label-column last -methods "$methods" \
      -seed "$seed" -steps "${STEPS:-5000}" -out "$out/${file%%.*}-s$seed" >> "$out/${file%%.*}-s$seed.log" 2>&1
    tail -n 5 "$out/${file%%.*}-s$seed.log"
  done
done
# One row per data set and method: mean held-out log-likelihood over the
# seeds, and the lowest and highest seed's.
echo "data,method,seeds,mean_test_loglik,min,max"
for f in "$out"/*-s*/loglik.csv; do
  name=$(basename "$(dirname "$f")")
  tail -n +2 "$f" | sed "s/^/${name%-s*},/"
done | sort | awk -F, '
  { key = $1 "," $2; n[key]++; s[key] += $3
    if (!(key in lo) || $3 < lo[key]) lo[key] = $3
    if (!(key in hi) || $3 > hi[key]) hi[key] = $3 }
  END { for (k in n) printf "%s,%d,%.3f,%.3f,%.3f\n", k, n[k], s[k] / n[k], lo[k], hi[k] }' | sort
echo "run,method,test_loglik"
/usr/bin/python3 scripts/vectors-gaussian.py "$out"/*-s[0-9]/
