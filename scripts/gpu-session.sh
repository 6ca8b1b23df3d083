#!/usr/bin/env bash
# The GPU runbook's measurements (docs/lebm.md) as one device call that ends
# inside BUDGET seconds (default 520): each step runs under `timeout` with
# what is left, so a slow step costs the later ones, never the whole call.
#
#   scripts/gpu-session.sh pack            (here, with Go: fills .gpu-run/)
#   scripts/gpu-session.sh run OUT_DIR     (there; carry .gpu-run)
#
# pack builds bench-lebm and check-backend and writes check-backend's
# SimpleGo references for REF_SHAPES (default svhn: a cifar10 or celeba64
# reference is 47–68 MB per method, past the device tool's 64 MiB carry),
# compressed with xz (the three methods share their variables, which xz's
# window finds). run, in order of value:
#   1. check-backend: the GPU against the carried references (check.md);
#   2. eager PyTorch at batch 128 on SHAPES (default cifar10,celeba64),
#      TF32 off and on (pt.md, pt-tf32.md);
#   3. bench-lebm on the CUDA plugin, one file per shape (go-SHAPE.md),
#      -sampling=false (its 500-step chains compile for minutes);
#   4. bench-lebm on svhn with bfloat16 generator layers (go-bf16.md) and
#      with NVIDIA_TF32_OVERRIDE=0 (go-fp32.md);
#   5. XLA's optimised HLO of one DUMP_SHAPE (default celeba64) ED training
#      step (hlo.tar.xz): which cuDNN convolutions, layouts and transposes
#      XLA chose, to set against PyTorch's speed on that shape;
#   6. bench-lebm on SHAPES with --xla_gpu_force_conv_nhwc (go-nhwc-SHAPE.md):
#      XLA gives float32 convolutions NCHW layouts on CUDA (NHWC only for
#      16-bit types), and TF32 tensor cores may prefer NHWC.
# STEPS picks and orders them (default "check pytorch go bf16 fp32 dump nhwc").
# Every step's output also goes to OUT_DIR/run.log as it comes; the files
# named above are bundled into OUT_DIR/results.tar at the end (the device
# tool brings back at most 8 files). BATCH (default 128) and
# ITERS (default 10 timed iterations per row) apply to both sides; GO_FLAGS
# and PY_FLAGS add flags to bench-lebm and scripts/lebm_bench.py (say
# "-sampling=true", "--compile"); PEAK_TFLOPS / PEAK_TFLOPS_BF16 (495 / 989,
# an H100 SXM's dense TF32 / bfloat16 peaks; 378 / 756 on a PCIe card) add a
# % of peak column. The plugin is Python's jax-cuda13-pjrt, found by
# scripts/cuda-env.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit

pack_dir=.gpu-run

pack() {
  if ! git check-ignore -q "$pack_dir/x"; then
    echo "gpu-session: $pack_dir is not ignored by git (see .gitignore)" >&2
    exit 1
  fi
  rm -rf "$pack_dir" && mkdir -p "$pack_dir/bin"
  CGO_ENABLED=1 go build -ldflags="-s -w" -o "$pack_dir/bin/" ./cmd/bench-lebm ./cmd/check-backend || exit
  "$pack_dir/bin/check-backend" -backend go -write "$pack_dir/ref" -batch 4 -shapes "${REF_SHAPES:-svhn}" || exit
  tar -C "$pack_dir" -cf - bin ref | xz -T1 -9 >"$pack_dir/pack.tar.xz" || exit
  rm -rf "${pack_dir:?}/bin" "${pack_dir:?}/ref"
  du -sh "$pack_dir"
}

run() {
  local out=$1 budget=${BUDGET:-520} iters=${ITERS:-10} batch=${BATCH:-128}
  local shapes=${SHAPES:-cifar10,celeba64}
  local start=$SECONDS
  mkdir -p "$out"
  exec > >(tee -a "$out/run.log") 2>&1
  # step NAME CMD...: runs CMD with the seconds left, and reports its status.
  step() {
    local name=$1 left=$((budget - (SECONDS - start)))
    shift
    if ((left < 30)); then
      echo "### $name: skipped, $left s left"
      return
    fi
    echo "### $name ($left s left): $*"
    timeout -k 10 "$left" "$@"
    echo "### $name: exit $? at $((SECONDS - start)) s"
  }
  local work res
  work=$(mktemp -d)
  res=$work/results
  mkdir -p "$res"
  xz -dc "$pack_dir/pack.tar.xz" | tar -C "$work" -xf - || exit
  # shellcheck source=scripts/cuda-env.sh
  source scripts/cuda-env.sh || exit
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, GOMLX_BACKEND=$GOMLX_BACKEND"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv

  # shellcheck disable=SC2206 # PY_FLAGS and GO_FLAGS are lists of flags
  local pt_bench=(python3 scripts/lebm_bench.py --device cuda --shapes "$shapes" --batch "$batch" --iters "$iters" ${PY_FLAGS:-})
  # shellcheck disable=SC2206
  local go_bench=("$work/bin/bench-lebm" -backend "$GOMLX_BACKEND" -batch "$batch" -iters "$iters" -sampling=false ${GO_FLAGS:-})
  # go_shapes PREFIX: bench-lebm on each of SHAPES into PREFIX-SHAPE.md, in
  # the caller's environment (XLA_FLAGS for the nhwc step).
  go_shapes() {
    local shape
    for shape in ${shapes//,/ }; do
      step "$1-$shape" "${go_bench[@]}" -shapes "$shape" -peak-tflops "${PEAK_TFLOPS:-495}" -out "$res/$1-$shape.md"
    done
  }
  local what
  for what in ${STEPS:-check pytorch go bf16 fp32 dump nhwc}; do
    case $what in
    check) step check-backend "$work/bin/check-backend" -backend "$GOMLX_BACKEND" -check "$work/ref" -out "$res/check.md" ;;
    pytorch)
      step pytorch "${pt_bench[@]}" --out "$res/pt.md"
      step pytorch-tf32 "${pt_bench[@]}" --tf32 --out "$res/pt-tf32.md"
      ;;
    go) go_shapes go ;;
    bf16) step go-bf16 "${go_bench[@]}" -shapes svhn -compute-dtype bfloat16 -peak-tflops "${PEAK_TFLOPS_BF16:-989}" -out "$res/go-bf16.md" ;;
    fp32) NVIDIA_TF32_OVERRIDE=0 step go-fp32 "${go_bench[@]}" -shapes svhn -out "$res/go-fp32.md" ;;
    dump)
      XLA_FLAGS="$XLA_FLAGS --xla_dump_to=$work/dump --xla_dump_hlo_as_text" step dump \
        "${go_bench[@]}" -shapes "${DUMP_SHAPE:-celeba64}" -methods ed -prior-iters 0
      find "$work/dump" -name '*after_optimizations.txt' -printf '%P\n' 2>/dev/null |
        tar -C "$work/dump" -cf - -T - | xz -T0 >"$res/hlo.tar.xz"
      ;;
    nhwc) XLA_FLAGS="$XLA_FLAGS --xla_gpu_force_conv_nhwc" go_shapes go-nhwc ;;
    *) echo "### unknown step $what (valid: check pytorch go bf16 fp32 dump nhwc)" ;;
    esac
  done
  tar -C "$res" -cf "$out/results.tar" .
  echo "# done at $((SECONDS - start)) s"
}

case ${1:-} in
pack) pack ;;
run) run "${2:?usage: scripts/gpu-session.sh run OUT_DIR}" ;;
*)
  echo "usage: scripts/gpu-session.sh pack | run OUT_DIR" >&2
  exit 2
  ;;
esac
