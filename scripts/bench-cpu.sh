#!/usr/bin/env bash
# CPU speed side by side: one LEBM training iteration (ED, CD and SM prior
# updates) at the Fashion-MNIST shape (batch 64) and the svhn shape
# (batch 16), by
#
#   go-xla           cmd/bench-lebm on XLA CPU (the xla-cpu-pjrt plugin)
#   go-simplego      cmd/bench-lebm on SimpleGo (SIMPLEGO_ITERS > 0)
#   pytorch          baselines/lebm_bench.py, eager
#   pytorch-compile  the same under torch.compile
#   jax              baselines/lebm_bench_jax.py on XLA CPU, the Langevin
#                    chains unrolled (as the GoMLX graph)
#   jax-fori         the same with the chains as a loop (lax.scan, one step
#                    a trip)
#
# with PyTorch and JAX as a user installs them today: the versions pinned in
# baselines/requirements.txt, installed by this script into an environment
# of their own (BASELINES_VENV, default ~/.cache/edlebm/baselines-venv) on
# its first run. In each round the machine's float32 peak is measured on
# the same cores (scripts/peak_matmul.py: a 2048² matrix product through
# PyTorch and through XLA), and the table gives the fraction of it that Go
# on XLA CPU reaches, from the FLOPs of bench-lebm -flops-only.
#
# All are pinned to the same cores (taskset -c $CORES, default one core: 0),
# as many threads as cores, and run in interleaved rounds, so that the
# machine's drift hits each alike. PyTorch gets OPENBLAS_NUM_THREADS=1: its
# own OpenMP threads split the work (with Debian's OpenBLAS, its pthreads
# beside them made the 2-thread Fashion-MNIST step 3.5x slower).
# Each process compiles anew (go-xla and jax report that time as well).
# Writes the median and range over the rounds of each implementation's
# seconds per iteration, the ratios and the fraction of peak to OUT (default
# docs/results/cpu-speed.md; scripts/bench_table.py); the raw rows go
# beside it (.tsv, .peak.tsv, .flops.tsv).
#
#   scripts/bench-cpu.sh [OUT]
#
# Environment: ROUNDS (3), CORES (0; e.g. 0,1), ITERS (5 timed iterations
# per run), SIMPLEGO_ITERS (0: SimpleGo left out), SHAPES ("mnist:64
# svhn:16"), IMPLS ("go-xla pytorch pytorch-compile jax jax-fori"),
# TORCH_PYTHON and JAX_PYTHON (default: the environment's python).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/cpu-speed.md}
rounds=${ROUNDS:-3}
cores=${CORES:-0}
threads=$(taskset -c "$cores" nproc)
iters=${ITERS:-5}
simplego_iters=${SIMPLEGO_ITERS:-0}
shapes=${SHAPES:-mnist:64 svhn:16}
impls=${IMPLS:-go-xla pytorch pytorch-compile jax jax-fori}
# shellcheck source=scripts/baselines-env.sh
. scripts/baselines-env.sh

go build -o bin/ ./cmd/bench-lebm
raw=${out%.md}.tsv
peak=${out%.md}.peak.tsv
flops=${out%.md}.flops.tsv
printf 'round\timpl\tshape\tbatch\tmethod\ts_per_iter\tcompile_s\n' >"$raw"
printf 'round\tlib\tgflops\n' >"$peak"
printf 'shape\tbatch\tmethod\tgflop\n' >"$flops"

# run IMPL SHAPE BATCH S_COL COMPILE_COL CMD...: runs CMD on the pinned
# cores and appends its table rows for SHAPE (seconds per iteration in
# column S_COL, compile seconds in COMPILE_COL, 0 for none) to the raw file.
run() {
  local impl=$1 shape=$2 batch=$3 s_col=$4 c_col=$5
  shift 5
  local log
  log=$(taskset -c "$cores" "$@" 2>&1) || { echo "$log" >&2; echo "bench-cpu: $impl failed" >&2; exit 1; }
  echo "$log" | awk -F'|' -v r="$round" -v i="$impl" -v s="$shape" -v b="$batch" -v sc="$s_col" -v cc="$c_col" '
    { for (k = 1; k <= NF; k++) gsub(/^ +| +$/, "", $k) }
    $2 == s && $3 ~ /^(ed|cd|sm)$/ { printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, i, s, b, $3, $(sc + 1), (cc > 0 ? $(cc + 1) : "") }' >>"$raw"
}

# wants IMPL: whether IMPLS names it.
wants() { [[ " $impls " == *" $1 "* ]]; }

for sb in $shapes; do
  shape=${sb%%:*} batch=${sb##*:}
  bin/bench-lebm -flops-only -shapes "$shape" -batch "$batch" | awk -F'|' -v b="$batch" '
    { for (k = 1; k <= NF; k++) gsub(/^ +| +$/, "", $k) }
    $3 ~ /^(ed|cd|sm)$/ { printf "%s\t%s\t%s\t%s\n", $2, b, $3, $4 }' >>"$flops"
done

for round in $(seq "$rounds"); do
  taskset -c "$cores" "$torch_py" scripts/peak_matmul.py --threads "$threads" --libs torch | awk -v r="$round" '{ printf "%s\ttorch\t%s\n", r, $5 }' >>"$peak"
  taskset -c "$cores" "$jax_py" scripts/peak_matmul.py --threads "$threads" --libs jax | awk -v r="$round" '{ printf "%s\txla\t%s\n", r, $5 }' >>"$peak"
  for sb in $shapes; do
    shape=${sb%%:*} batch=${sb##*:}
    echo "round $round: $shape, batch $batch" >&2
    common=(--shapes "$shape" --batch "$batch" --iters "$iters" --prior-iters 0 --no-sampling)
    torch_env=(env OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS=1 "$torch_py" baselines/lebm_bench.py --device cpu --threads "$threads")
    ! wants go-xla || run go-xla "$shape" "$batch" 3 4 bin/bench-lebm -backend cpu -shapes "$shape" -batch "$batch" -iters "$iters" -prior-iters 0 -sampling=false
    [ "$simplego_iters" -eq 0 ] || run go-simplego "$shape" "$batch" 3 0 bin/bench-lebm -backend go -shapes "$shape" -batch "$batch" -iters "$simplego_iters" -prior-iters 0 -sampling=false
    ! wants pytorch || run pytorch "$shape" "$batch" 3 0 "${torch_env[@]}" "${common[@]}"
    ! wants pytorch-compile || run pytorch-compile "$shape" "$batch" 3 0 "${torch_env[@]}" "${common[@]}" --compile
    ! wants jax || run jax "$shape" "$batch" 3 7 "$jax_py" baselines/lebm_bench_jax.py --threads "$threads" "${common[@]}"
    ! wants jax-fori || run jax-fori "$shape" "$batch" 3 7 "$jax_py" baselines/lebm_bench_jax.py --threads "$threads" --unroll 1 "${common[@]}"
  done
done

python3 scripts/bench_table.py "$raw" "$out" --flops "$flops" --peak "$peak" \
  --title "LEBM training iteration on the CPU: Go (XLA CPU), PyTorch and JAX as installed today" \
  --note "Command: \`ROUNDS=$rounds CORES=$cores ITERS=$iters IMPLS=\"$impls\" scripts/bench-cpu.sh $out\` — $versions (baselines/requirements.txt); $rounds interleaved rounds, every implementation pinned to cores $cores (taskset) with $threads thread(s) (Go on XLA CPU: one device per core, backend.Choice.CPUDevices), $(date -u +%Y-%m-%d); $(nproc) cores on the machine. Seconds per iteration: median over rounds (min … max); each round's value is one process's mean (Go) or median (PyTorch, JAX) over its timed iterations after a warm-up. Compile: the first iteration's seconds (go-xla) or jit compile time (jax), median over rounds."
