#!/usr/bin/env bash
# The paper's latent-EBM comparison on real images (issue 15): ED-, CD- and
# SM-LEBM on the whole Fashion-MNIST training set, the paper's mnist-size
# model, EPOCHS epochs each, for each seed of SEEDS. CD runs at Pang et
# al.'s settings (-preset pang-cd: prior lr 2e-5, decay 0.998 per epoch,
# batch 100); ED and SM at the paper's (batch 128). Then every run is
# evaluated with eval-lebm (test reconstruction MSE of 1,000 images,
# classifier-FID of 5,000 samples from 500-step prior Langevin, both with
# bootstrap intervals, 8 prior chains of 2,000 steps for R̂), at its end and
# at every end-of-epoch snapshot (-each-epoch), and compare-evals tabulates
# them: the runs, each method's mean over seeds, and curves over epochs.
#
# Long: about an hour per ED run and 1.5–2 hours per CD or SM run on XLA
# CPU with two cores, evaluation included (docs/lebm.md has the plan).
# Every step resumes or is skipped when done: run the script again after
# any interruption. Run folders live in OUT, outside the repository; DOCS
# (e.g. docs/results/fmnist-fidelity) receives each run's summary.json,
# metrics.jsonl (gzipped) and grids as soon as it is evaluated, and the
# comparison of every run evaluated so far, remade after each. A run whose results are in DOCS is not trained again even if its
# folder is gone (a machine replaced between sessions): the comparison
# reads DOCS's copy.
#
#   nohup nice scripts/fidelity-fmnist.sh [OUT] > fidelity.log 2>&1 &
#
# Settings (environment): SEEDS, METHODS, EPOCHS, BACKEND; SAMPLERS, the
# generation samplers each run is evaluated with besides the paper's
# Langevin (e.g. "mala": the latest checkpoint again, into RUN/eval-mala,
# kept as DOCS/RUN/summary-mala.json and compared in DOCS/mala); for a
# quick trial TRAIN_SIZE (images, 0: all) and EVAL_FLAGS (extra eval-lebm
# flags).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$HOME/runs/fidelity-fmnist}
seeds=${SEEDS:-1 2}
methods=${METHODS:-ed cd sm}
epochs=${EPOCHS:-20}
backend=${BACKEND:-auto}
train_size=${TRAIN_SIZE:-0}
samplers=${SAMPLERS:-}
read -r -a eval_flags <<<"${EVAL_FLAGS:-}"

mkdir -p "$out/bin"
go build -o "$out/bin/" ./cmd/train-lebm ./cmd/eval-lebm ./cmd/train-classifier ./cmd/compare-evals
log() { echo "$(date -u '+%F %T') $*"; }

clf=$out/classifier
if [ ! -f "$clf/train-stats.bin" ]; then
  log "training the classifier for classifier-FID"
  "$out/bin/train-classifier" -backend "$backend" -out "$clf" >"$out/classifier.log" 2>&1
fi

# keep copies a run's results into DOCS.
keep() { # run
  local run=$1 name
  name=$(basename "$run")
  mkdir -p "$DOCS/$name"
  cp "$run/eval/summary.json" "$run/eval/samples.png" "$run/eval/energy_profile.png" "$run/losses.png" "$DOCS/$name/"
  gzip -9 <"$run/metrics.jsonl" >"$DOCS/$name/metrics.jsonl.gz"
  local samples=("$run"/samples-epoch*.png) recons=("$run"/reconstructions-epoch*.png)
  cp "${samples[-1]}" "${recons[-1]}" "$DOCS/$name/"
}

names=() # every run, seed by seed
for seed in $seeds; do
  for method in $methods; do names+=("$method-s$seed"); done
done
reports=() # the runs evaluated so far (read by compare without DOCS)

# compare tabulates the runs evaluated so far; with DOCS, it reads (and
# names) DOCS's copies, including those of runs whose folders are gone.
compare() {
  local found=() name
  if [ -n "${DOCS:-}" ]; then
    for name in "${names[@]}"; do
      if [ -f "$DOCS/$name/summary.json" ]; then found+=("$DOCS/$name/summary.json"); fi
    done
  else
    found=("${reports[@]}")
  fi
  if [ ${#found[@]} -gt 0 ]; then
    "$out/bin/compare-evals" -out "${DOCS:-$out/comparison}" -title "Fashion-MNIST, ${epochs} epochs per run" "${found[@]}"
  fi
}

for seed in $seeds; do
  for method in $methods; do
    run=$out/$method-s$seed
    kept=${DOCS:-/nonexistent}/$(basename "$run")/summary.json
    if [ ! -f "$run/eval/summary.json" ] && [ -f "$kept" ]; then
      log "$method, seed $seed: no run folder, but its results are in $DOCS"
      continue
    fi
    flags=(-method "$method")
    [ "$method" = cd ] && flags=(-preset pang-cd)
    reports+=("$run/eval")
    if [ ! -f "$run/eval/summary.json" ]; then
      log "training $method, seed $seed → $run"
      "$out/bin/train-lebm" -backend "$backend" -data fashion-mnist "${flags[@]}" -seed "$seed" -epochs "$epochs" \
        -train-size "$train_size" -checkpoint-every 5m -keep-epochs "$epochs" -out "$run" >>"$run.train.log" 2>&1
      log "evaluating $method, seed $seed"
      "$out/bin/eval-lebm" -backend "$backend" -data fashion-mnist -run "$run" -classifier "$clf" -each-epoch "${eval_flags[@]}" -out "$run/eval.tmp" >"$run.eval.log" 2>&1
      rm -rf "$run/eval" && mv "$run/eval.tmp" "$run/eval"
      if [ -n "${DOCS:-}" ]; then keep "$run"; fi
      compare >"$out/comparison.log" 2>&1 || log "compare-evals failed (see $out/comparison.log); training goes on"
    fi
    for sampler in $samplers; do
      if [ ! -f "$run/eval-$sampler/summary.json" ] && [ -d "$run/checkpoint" ]; then
        log "evaluating $method, seed $seed, generation by $sampler"
        "$out/bin/eval-lebm" -backend "$backend" -data fashion-mnist -run "$run" -classifier "$clf" -gen-sampler "$sampler" "${eval_flags[@]}" -out "$run/eval-$sampler.tmp" >"$run.eval-$sampler.log" 2>&1
        rm -rf "$run/eval-$sampler" && mv "$run/eval-$sampler.tmp" "$run/eval-$sampler"
        if [ -n "${DOCS:-}" ]; then cp "$run/eval-$sampler/summary.json" "$DOCS/$(basename "$run")/summary-$sampler.json"; fi
      fi
    done
    log "done: $method, seed $seed"
  done
done
compare
# The same runs with each other generation sampler, side by side.
for sampler in $samplers; do
  found=()
  for name in "${names[@]}"; do
    kept=${DOCS:+$DOCS/$name/summary-$sampler.json}
    kept=${kept:-$out/$name/eval-$sampler/summary.json}
    if [ -f "$kept" ]; then found+=("$kept"); fi
  done
  if [ ${#found[@]} -gt 0 ]; then
    "$out/bin/compare-evals" -out "${DOCS:-$out/comparison}/$sampler" -title "Fashion-MNIST, ${epochs} epochs per run, generation by $sampler" "${found[@]}"
  fi
done
