#!/usr/bin/env bash
# The anomaly-detection comparison of ED-, CD- and SM-LEBM on Fashion-MNIST:
# for each held-out class (the paper's 1 4 5 7 9) and prior update, train
# under the held-out-class protocol (train-lebm -anomaly-holdout K), keeping
# the last end-of-epoch snapshots, then score the protocol's test split with
# eval-lebm and average the AUPRC over those snapshots. Runs JOBS jobs at a
# time; every step resumes or is skipped when done, so run it again after an
# interruption. Ends with compare-evals over the finished runs, methods in
# the order of METHODS: comparison.md (the AUPRC by held-out class and
# method, bootstrap intervals, paired differences) and anomaly_auprc.png in
# OUT/comparison or, with DOCS set, in DOCS beside copies of each run's
# summary.json and anomaly_scores.csv (DOCS=docs/results/fmnist-anomaly
# for the repository's docs), copied as soon as each run is evaluated; a
# run whose copies DOCS holds is not run again even if its folder is gone
# (a machine replaced between sessions). COMPARE_ONLY=1 skips the runs: the
# comparison of those finished so far, safe while another instance is
# training.
#
#   scripts/anomaly-fmnist.sh [OUT]   (default runs/anomaly-fmnist)
#
# Another data set: DATA_FLAGS, train-lebm's flags naming it (default:
# Fashion-MNIST from Debian's package), e.g. DATA_FLAGS="-data
# folder:/tmp/digits -image-size 28 -channels 1 -enlarge" for a folder of
# images in class folders (docs/own-data.md's digits), and TITLE its name
# in the comparison's title.
#
# Settings (environment): CLASSES, METHODS, TRAIN_SIZE (0: all), BATCH,
# EPOCHS, KEEP (snapshots averaged), SCORE_N (test images scored per
# snapshot), JOBS, BACKEND (default go, as the recorded short runs; auto
# for XLA), CD_PRESET (e.g. pang-cd: CD runs start from that train-lebm
# -preset, BATCH still applying).
# eval-lebm's other outputs are kept small: only the AUPRC is wanted here.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/anomaly-fmnist}
classes=${CLASSES:-1 4 5 7 9}
methods=${METHODS:-ed cd sm}
train_size=${TRAIN_SIZE:-1600}
batch=${BATCH:-64}
epochs=${EPOCHS:-12}
keep=${KEEP:-3}
score_n=${SCORE_N:-640}
jobs=${JOBS:-2}
backend=${BACKEND:-go}
cd_preset=${CD_PRESET:-}

mkdir -p "$out/bin"
if [[ ${COMPARE_ONLY:-0} != 1 ]]; then
  go build -o "$out/bin/" ./cmd/train-lebm ./cmd/eval-lebm
fi
go build -o "$out/bin/" ./cmd/compare-evals

job() { # class method
  local run="$out/$1-$2" method_flags=(-method "$2") kept=${DOCS:-} data_flags
  read -r -a data_flags <<<"${DATA_FLAGS:-}"
  if [[ $2 == cd && -n $cd_preset ]]; then method_flags=(-preset "$cd_preset"); fi
  if [[ -n $kept && -f $kept/$1-$2/summary.json ]]; then
    echo "$(date -u +%H:%M:%S) done before: class $1, $2 (in $kept)"
    return
  fi
  if [ ! -f "$run/eval/summary.json" ]; then
    "$out/bin/train-lebm" -backend "$backend" "${data_flags[@]}" "${method_flags[@]}" -anomaly-holdout "$1" -train-size "$train_size" -batch "$batch" \
      -epochs "$epochs" -keep-epochs "$keep" -recon 16 -grid 64 -out "$run" >"$run.train.log" 2>&1
    "$out/bin/eval-lebm" -backend "$backend" -run "$run" -anomaly-holdout "$1" -anomaly-n "$score_n" -anomaly-checkpoints "$keep" \
      -batch "$batch" -recon-n "$batch" -chains 2 -chain-steps 100 -max-lag 10 -interp-rows 1 -interp-steps 2 \
      -out "$run/eval.tmp" >"$run.eval.log" 2>&1
    rm -rf "$run/eval" && mv "$run/eval.tmp" "$run/eval"
  fi
  if [[ -n $kept ]]; then
    mkdir -p "$kept/$1-$2"
    cp "$run/eval/summary.json" "$run/eval/anomaly_scores.csv" "$kept/$1-$2/"
  fi
  echo "$(date -u +%H:%M:%S) done: class $1, $2"
}
export -f job
export out train_size batch epochs keep score_n backend cd_preset DOCS DATA_FLAGS

if [[ ${COMPARE_ONLY:-0} != 1 ]]; then
  # shellcheck disable=SC2016 # $0 and $1 expand in the child bash
  for k in $classes; do for m in $methods; do echo "$k $m"; done; done |
    xargs -P "$jobs" -L 1 bash -c 'job "$0" "$1"'
fi

reports=()
for k in $classes; do
  for m in $methods; do
    src=$out/$k-$m/eval
    [[ -n ${DOCS:-} ]] && src=$DOCS/$k-$m
    [[ -f $src/summary.json ]] || continue
    reports+=("$src")
  done
done
"$out/bin/compare-evals" -out "${DOCS:-$out/comparison}" \
  -title "${TITLE:-Fashion-MNIST} anomaly AUPRC (${epochs} epochs of ${train_size/#0/all} images per run)" "${reports[@]}"
