#!/usr/bin/env bash
# CPU speed side by side: one LEBM training iteration (ED, CD and SM prior
# updates) at the Fashion-MNIST shape (batch 64) and the svhn shape
# (batch 16), by
#
#   go-xla       cmd/bench-lebm on XLA CPU (the xla-cpu-pjrt plugin)
#   go-simplego  cmd/bench-lebm on SimpleGo
#   pytorch      baselines/lebm_bench.py, Debian's PyTorch with OpenBLAS
#   jax          baselines/lebm_bench_jax.py on XLA CPU
#
# all pinned to the same cores (taskset -c $CORES, default one core: 0), as
# many threads as cores, and run in interleaved rounds, so that the
# machine's drift hits each alike. PyTorch gets OPENBLAS_NUM_THREADS=1: its
# own OpenMP threads split the work, and OpenBLAS's pthreads beside them
# made the 2-thread Fashion-MNIST step 3.5x slower (1.35-1.80 s against
# 0.36-0.39 s).
# Each process compiles anew (go-xla and jax report that time as well).
# Writes the median and range over the rounds of each implementation's
# seconds per iteration, and the ratios to PyTorch and JAX, to OUT (default
# docs/results/cpu-speed.md; scripts/bench_table.py); the raw rows go
# beside it (.tsv).
#
#   scripts/bench-cpu.sh [OUT]
#
# Environment: ROUNDS (3), CORES (0; e.g. 0,1), ITERS (5 timed iterations
# per run), SIMPLEGO_ITERS (2; 0 leaves SimpleGo out), SHAPES ("mnist:64 svhn:16"), TORCH_PYTHON
# (/usr/bin/python3), JAX_PYTHON (/opt/jaxenv/bin/python; a Python with jax,
# e.g. `python3 -m venv /opt/jaxenv && /opt/jaxenv/bin/pip install jax`).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/cpu-speed.md}
rounds=${ROUNDS:-3}
cores=${CORES:-0}
threads=$(taskset -c "$cores" nproc)
iters=${ITERS:-5}
simplego_iters=${SIMPLEGO_ITERS:-2}
shapes=${SHAPES:-mnist:64 svhn:16}
jax_py=${JAX_PYTHON:-/opt/jaxenv/bin/python}
# shellcheck source=scripts/torch-env.sh
. scripts/torch-env.sh

go build -o bin/ ./cmd/bench-lebm
raw=${out%.md}.tsv
printf 'round\timpl\tshape\tbatch\tmethod\ts_per_iter\tcompile_s\n' >"$raw"

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

for round in $(seq "$rounds"); do
  for sb in $shapes; do
    shape=${sb%%:*} batch=${sb##*:}
    echo "round $round: $shape, batch $batch" >&2
    run go-xla "$shape" "$batch" 3 4 bin/bench-lebm -backend cpu -shapes "$shape" -batch "$batch" -iters "$iters" -prior-iters 0 -sampling=false
    [ "$simplego_iters" -eq 0 ] || run go-simplego "$shape" "$batch" 3 0 bin/bench-lebm -backend go -shapes "$shape" -batch "$batch" -iters "$simplego_iters" -prior-iters 0 -sampling=false
    run pytorch "$shape" "$batch" 3 0 env OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS=1 "$torch_py" baselines/lebm_bench.py --device cpu --threads "$threads" --shapes "$shape" --batch "$batch" --iters "$iters" --prior-iters 0 --no-sampling
    run jax "$shape" "$batch" 3 7 "$jax_py" baselines/lebm_bench_jax.py --threads "$threads" --shapes "$shape" --batch "$batch" --iters "$iters" --prior-iters 0 --no-sampling
  done
done

python3 scripts/bench_table.py "$raw" "$out" \
  --title "LEBM training iteration on the CPU: Go (XLA CPU, SimpleGo), PyTorch, JAX" \
  --note "Command: \`CORES=$cores scripts/bench-cpu.sh\` — $rounds interleaved rounds, every implementation pinned to cores $cores (taskset) with $threads thread(s) (Go on XLA CPU: one device per core, backend.Choice.CPUDevices), $(date -u +%Y-%m-%d); $(nproc) cores on the machine. Seconds per iteration: median over rounds (min … max); each round's value is one process's mean (Go) or median (PyTorch, JAX) over its timed iterations after a warm-up. Compile: the first iteration's seconds (go-xla) or jit compile time (jax), median over rounds."
