#!/usr/bin/env bash
# Training speed of the 2-D density experiments side by side: one step of
# ED, SM and CD on 25-Gaussians (the paper's 2→128⁴→1 softplus MLP, batch
# 128, Adam and the parameter average), by
#
#   go-xla       density's BenchmarkTrainStep on XLA CPU (xla-cpu-pjrt)
#   go-simplego  the same benchmark on SimpleGo
#   pytorch      baselines/toy_bench.py, eager
#   jax          baselines/toy_bench_jax.py on XLA CPU
#
# with PyTorch and JAX as a user installs them today (the versions pinned
# in baselines/requirements.txt, in their own environment: see
# scripts/baselines-env.sh)
#
# all pinned to the same cores (taskset -c $CORES, default one core: 0), as
# many threads as cores, in interleaved rounds (PyTorch with
# OPENBLAS_NUM_THREADS=1, as in bench-cpu.sh: OpenBLAS's own threads beside
# PyTorch's OpenMP ones slow it down). Writes the median and range
# of each implementation's milliseconds per step to OUT (default
# docs/results/toy-speed.md; scripts/bench_table.py), raw rows beside it.
#
#   scripts/bench-toy.sh [OUT]
#
# Environment: ROUNDS (3), CORES (0; e.g. 0,1), STEPS (300 timed steps per
# run), SIMPLEGO_STEPS (30; 0 leaves SimpleGo out), BASELINES_VENV,
# TORCH_PYTHON, JAX_PYTHON (scripts/baselines-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/toy-speed.md}
rounds=${ROUNDS:-3}
cores=${CORES:-0}
threads=$(taskset -c "$cores" nproc)
steps=${STEPS:-300}
simplego_steps=${SIMPLEGO_STEPS:-30}
# shellcheck source=scripts/baselines-env.sh
. scripts/baselines-env.sh

mkdir -p bin
go test -c -o bin/density.test ./density
raw=${out%.md}.tsv
printf 'round\timpl\tshape\tbatch\tmethod\ts_per_iter\tcompile_s\n' >"$raw"

# go_bench IMPL BACKEND STEPS: the Go benchmark's rows (ns/op → s).
go_bench() {
  local impl=$1 backend=$2 n=$3
  (cd density && EDLEBM_TEST_BACKEND=$backend taskset -c "$cores" ../bin/density.test \
    -test.run '^$' -test.bench BenchmarkTrainStep -test.benchtime "${n}x") |
    awk -v r="$round" -v i="$impl" '$1 ~ /^BenchmarkTrainStep\// {
      split($1, name, "/"); sub(/-[0-9]+$/, "", name[2])
      printf "%s\t%s\t25gaussians\t128\t%s\t%.9f\t\n", r, i, name[2], $3 / 1e9 }' >>"$raw"
}

# py_bench IMPL CMD...: the JSON lines of toy_bench.py or toy_bench_jax.py.
py_bench() {
  local impl=$1
  shift
  taskset -c "$cores" "$@" --method all --steps "$((steps * 3))" --warmup 50 --threads "$threads" --json |
    "$torch_py" -c '
import json, sys
r, impl = sys.argv[1:3]
for line in sys.stdin:
    d = json.loads(line)
    print("\t".join([r, impl, "25gaussians", "128", d["method"], "%.9f" % (1 / d["steps_per_sec"]), str(d.get("compile_s", ""))]))
' "$round" "$impl" >>"$raw"
}

for round in $(seq "$rounds"); do
  echo "round $round" >&2
  go_bench go-xla cpu "$steps"
  [ "$simplego_steps" -eq 0 ] || go_bench go-simplego go "$simplego_steps"
  py_bench pytorch env OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS=1 "$torch_py" baselines/toy_bench.py
  py_bench jax "$jax_py" baselines/toy_bench_jax.py
done

python3 scripts/bench_table.py "$raw" "$out" --unit ms \
  --title "Toy training step (25-Gaussians energy MLP): Go (XLA CPU, SimpleGo), PyTorch and JAX as installed today" \
  --note "Command: \`ROUNDS=$rounds CORES=$cores STEPS=$steps SIMPLEGO_STEPS=$simplego_steps scripts/bench-toy.sh $out\` — $versions (baselines/requirements.txt); $rounds interleaved rounds, every implementation pinned to cores $cores (taskset) with $threads thread(s) (Go on XLA CPU: one device per core), $(date -u +%Y-%m-%d); $(nproc) cores on the machine. Milliseconds per step (batch drawn, loss, gradient, Adam, parameter average): median over rounds (min … max); Go: go test -bench's mean over $steps steps after 20 warm-up steps ($simplego_steps on SimpleGo); PyTorch and JAX: mean over $((steps * 3)) steps after 50. Compile: JAX's jit compile seconds (Go's benchmark compiles in its warm-up)."
