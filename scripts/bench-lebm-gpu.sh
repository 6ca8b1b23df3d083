#!/usr/bin/env bash
# Side-by-side LEBM training speed on one GPU machine, in one run: this
# project's cmd/bench-lebm (GoMLX on the CUDA PJRT plugin) and
# scripts/lebm_bench.py (the same iteration in eager PyTorch), one after the
# other, then prints both tables.
#
#   scripts/bench-lebm-gpu.sh [OUT_DIR]
#
# OUT_DIR (or $LEBM_BENCH_OUT; default docs/results) receives
#   lebm-speed-gpu-go.md, lebm-speed-gpu-pytorch.md and the two logs.
# On the device machine pass "$OUT" so the files come back.
#
# Environment:
#   BATCH       batch size of both benchmarks (default 128)
#   SHAPES      data-set shapes (default svhn,cifar10,celeba64)
#   GO_FLAGS    extra flags for bench-lebm (e.g. "-iters 5")
#   PY_FLAGS    extra flags for lebm_bench.py (e.g. "--compile")
#   PT_TF32=1   also run PyTorch with --tf32 (lebm-speed-gpu-pytorch-tf32.md)
#   GO_BF16=1   also run bench-lebm with bfloat16 generator layers
#               (-compute-dtype bfloat16; lebm-speed-gpu-go-bf16.md)
#   GO_NO_TF32=1 also run bench-lebm with NVIDIA_TF32_OVERRIDE=0, NVIDIA's
#               switch that keeps cuBLAS and cuDNN in full float32
#               (lebm-speed-gpu-go-fp32.md; whether XLA's own kernels honour
#               it is untested)
#   PEAK_TFLOPS the GPU's dense peak for float32 work as XLA runs it (TF32
#               tensor cores: 495 on an H100 SXM, 378 PCIe; -peak-tflops of
#               bench-lebm: a % of peak column); PEAK_TFLOPS_BF16 the same
#               for the GO_BF16 run (989 SXM, 756 PCIe)
#   PYTHON      the Python with torch and jax-cuda13-pjrt (default python3)
#   BENCH_LEBM  a prebuilt bench-lebm binary, used when `go` is not on PATH
#               (default bin/bench-lebm). The device machine has no Go: build
#               it here with `go build -o bin/bench-lebm ./cmd/bench-lebm`
#               (x86-64, cgo) and carry bin/ (it is git-ignored).
#
# CUDA PJRT plugin: scripts/cuda-env.sh (the recipe of GOMLX-NOTES for
# Python's jax-cuda13-pjrt, untested when this script was written).
set -euo pipefail
cd "$(dirname "$0")/.."

out_dir=${1:-${LEBM_BENCH_OUT:-docs/results}}
batch=${BATCH:-128}
shapes=${SHAPES:-svhn,cifar10,celeba64}
py=${PYTHON:-python3}
mkdir -p "$out_dir"

# --- CUDA PJRT plugin for the Go side --------------------------------------
# shellcheck source=scripts/cuda-env.sh
source scripts/cuda-env.sh || { echo "bench-lebm-gpu: no CUDA PJRT plugin" >&2; exit 1; }

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores"
nvidia-smi -L 2>/dev/null || echo "# nvidia-smi not available"
echo "# GOMLX_BACKEND=$GOMLX_BACKEND"
echo "# XLA_FLAGS=$XLA_FLAGS"

# --- Go (GoMLX, XLA CUDA) ----------------------------------------------------
if command -v go >/dev/null 2>&1; then
  go_cmd=(go run ./cmd/bench-lebm)
else
  bin=${BENCH_LEBM:-bin/bench-lebm}
  if [[ ! -x $bin ]]; then
    echo "bench-lebm-gpu: no go on PATH and no executable $bin (build it with go build -o bin/bench-lebm ./cmd/bench-lebm and carry bin/)" >&2
    exit 1
  fi
  go_cmd=("$bin")
fi
# go_bench NAME [FLAG...]: one bench-lebm run into lebm-speed-gpu-NAME.md
# (and .log); the environment of the call applies.
go_bench() {
  local name=$1
  shift
  # shellcheck disable=SC2206 # GO_FLAGS is a list of flags
  local args=(-backend "$GOMLX_BACKEND" -shapes "$shapes" -batch "$batch" -out "$out_dir/lebm-speed-gpu-$name.md" "$@" ${GO_FLAGS:-})
  echo "# ${go_cmd[*]} ${args[*]}"
  "${go_cmd[@]}" "${args[@]}" 2>&1 | tee "$out_dir/lebm-speed-gpu-$name.log"
}
go_md=$out_dir/lebm-speed-gpu-go.md
go_bench go ${PEAK_TFLOPS:+-peak-tflops "$PEAK_TFLOPS"}
if [[ ${GO_BF16:-0} == 1 ]]; then go_bench go-bf16 -compute-dtype bfloat16 ${PEAK_TFLOPS_BF16:+-peak-tflops "$PEAK_TFLOPS_BF16"}; fi
if [[ ${GO_NO_TF32:-0} == 1 ]]; then NVIDIA_TF32_OVERRIDE=0 go_bench go-fp32; fi

# --- PyTorch (eager, CUDA) ---------------------------------------------------
pt_md=$out_dir/lebm-speed-gpu-pytorch.md
# shellcheck disable=SC2206 # PY_FLAGS is a list of flags
py_args=(scripts/lebm_bench.py --device cuda --shapes "$shapes" --batch "$batch" --out "$pt_md" ${PY_FLAGS:-})
echo "# $py ${py_args[*]}"
PYTHONUNBUFFERED=1 "$py" "${py_args[@]}" 2>&1 | tee "$out_dir/lebm-speed-gpu-pytorch.log"
if [[ ${PT_TF32:-0} == 1 ]]; then
  # shellcheck disable=SC2206 # PY_FLAGS is a list of flags
  py_args=(scripts/lebm_bench.py --device cuda --shapes "$shapes" --batch "$batch" --tf32
           --out "$out_dir/lebm-speed-gpu-pytorch-tf32.md" ${PY_FLAGS:-})
  echo "# $py ${py_args[*]}"
  PYTHONUNBUFFERED=1 "$py" "${py_args[@]}" 2>&1 | tee "$out_dir/lebm-speed-gpu-pytorch-tf32.log"
fi

# --- Both tables ---------------------------------------------------------------
echo
echo "## Go (GoMLX, $GOMLX_BACKEND)"
echo
cat "$go_md"
echo
echo "## PyTorch"
echo
cat "$pt_md"
for extra in go-bf16 go-fp32; do
  if [[ -f $out_dir/lebm-speed-gpu-$extra.md ]]; then
    echo
    echo "## Go, $extra"
    echo
    cat "$out_dir/lebm-speed-gpu-$extra.md"
  fi
done
if [[ -f $out_dir/lebm-speed-gpu-pytorch-tf32.md && ${PT_TF32:-0} == 1 ]]; then
  echo
  echo "## PyTorch, TF32"
  echo
  cat "$out_dir/lebm-speed-gpu-pytorch-tf32.md"
fi
