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
#      -sampling=false (the samplers have a step of their own, 11);
#   4. bench-lebm on SHAPES with bfloat16 generator layers (go-bf16-SHAPE.md)
#      and on FP32_SHAPES (default svhn) with NVIDIA_TF32_OVERRIDE=0
#      (go-fp32-SHAPE.md);
#   5. XLA's optimised HLO of one DUMP_SHAPE (default celeba64) ED training
#      step and XLA's autotuning log, every convolution algorithm it tried
#      with its time (hlo.tar.xz): which cuDNN convolutions, layouts and
#      transposes XLA chose and what each costs;
#   6. bench-lebm on SHAPES with --xla_gpu_force_conv_nhwc (go-nhwc-SHAPE.md):
#      XLA gives float32 convolutions NCHW layouts on CUDA (NHWC only for
#      16-bit types), and TF32 tensor cores may prefer NHWC;
#   7. ptbest: PyTorch's faster configurations on SHAPES, TF32 on, each of
#      PT_VARIANTS, lebm_bench.py's flags joined by + (default: eager,
#      channels-last, autocast-bf16+channels-last, compile,
#      channels-last+compile; pt-best-VARIANT.md);
#   8. ptprofile: torch.profiler's kernel table of DUMP_SHAPE's ED step, TF32
#      on (pt-profile-*.txt), to set beside XLA's autotuning log;
#   9. nsys: Nsight Systems' kernel summary of three DUMP_SHAPE ED steps in
#      Go (nsys-stats.txt), if nsys is on the machine (tools.txt says what is);
#  10. phase: bench-lebm on SHAPES with every transposed convolution in the
#      phase form (-convt-impl phase, go-phase-SHAPE.md; on CUDA "auto" keeps
#      cuDNN's native form, which the go step times), not in the default
#      order: the CPU's form against cuDNN's;
#  11. samplers: the 500-step generation and the 100-step test posterior
#      alone on SHAPES, Go (bench-lebm -training=false: blocks of 25 steps,
#      seconds to compile; go-samplers-SHAPE.md) and PyTorch with TF32
#      (--no-training, pt-samplers.md), not in the default order.
# STEPS picks and orders them (default "check pytorch go bf16 fp32 dump nhwc
# ptbest ptprofile nsys"); METHODS (default ed,cd,sm) narrows both sides.
# Every step's output also goes to OUT_DIR/run.log as it comes; the files
# named above are bundled into OUT_DIR/results.tar at the end (the device
# tool brings back at most 8 files). BATCH (default 128) and
# ITERS (default 10 timed iterations per row) apply to both sides; GO_FLAGS
# and PY_FLAGS add flags to bench-lebm and baselines/lebm_bench.py (say
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

  {
    # shellcheck disable=SC2012 # the names are fixed paths
    echo "nsys: $(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null || echo none)"
    echo "ncu: $(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null || echo none)"
    python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
    python3 -m pip list 2>/dev/null | grep -i -E 'nvidia|jax|torch|triton'
  } >"$res/tools.txt" 2>&1
  local methods=${METHODS:-ed,cd,sm}
  # shellcheck disable=SC2206 # PY_FLAGS and GO_FLAGS are lists of flags
  local pt_bench=(python3 baselines/lebm_bench.py --device cuda --shapes "$shapes" --methods "$methods" --batch "$batch" --iters "$iters" ${PY_FLAGS:-})
  # shellcheck disable=SC2206
  local go_bench=("$work/bin/bench-lebm" -backend "$GOMLX_BACKEND" -batch "$batch" -iters "$iters" -sampling=false ${GO_FLAGS:-})
  # go_shapes PREFIX PEAK [FLAG...]: bench-lebm on each of SHAPES into
  # PREFIX-SHAPE.md, in the caller's environment (XLA_FLAGS for nhwc).
  go_shapes() {
    local prefix=$1 peak=$2 shape
    shift 2
    for shape in ${shapes//,/ }; do
      step "$prefix-$shape" "${go_bench[@]}" -methods "$methods" -shapes "$shape" -peak-tflops "$peak" -out "$res/$prefix-$shape.md" "$@"
    done
  }
  local dump_shape=${DUMP_SHAPE:-celeba64} what variant
  for what in ${STEPS:-check pytorch go bf16 fp32 dump nhwc ptbest ptprofile nsys}; do
    case $what in
    check) step check-backend "$work/bin/check-backend" -backend "$GOMLX_BACKEND" -check "$work/ref" -out "$res/check.md" ;;
    pytorch)
      step pytorch "${pt_bench[@]}" --out "$res/pt.md"
      step pytorch-tf32 "${pt_bench[@]}" --tf32 --out "$res/pt-tf32.md"
      ;;
    go) go_shapes go "${PEAK_TFLOPS:-495}" ;;
    bf16) go_shapes go-bf16 "${PEAK_TFLOPS_BF16:-989}" -compute-dtype bfloat16 ;;
    fp32) NVIDIA_TF32_OVERRIDE=0 shapes=${FP32_SHAPES:-svhn} go_shapes go-fp32 "${PEAK_TFLOPS_FP32:-67}" ;;
    dump)
      mkdir -p "$work/dump"
      local dump_flags="$XLA_FLAGS --xla_dump_to=$work/dump --xla_dump_hlo_as_text"
      XLA_FLAGS="$dump_flags --xla_gpu_dump_autotune_logs_to=$work/dump/autotune-logs.txt" \
        step dump "${go_bench[@]}" -shapes "$dump_shape" -methods ed -prior-iters 0
      # A plugin that does not know the autotuning flag stops at once: dump without it.
      if [[ -z $(find "$work/dump" -name '*after_optimizations.txt' 2>/dev/null) ]]; then
        XLA_FLAGS=$dump_flags step dump-again "${go_bench[@]}" -shapes "$dump_shape" -methods ed -prior-iters 0
      fi
      (cd "$work/dump" && find . \( -name '*after_optimizations.txt' -o -name 'autotune*' \) -printf '%P\n' 2>/dev/null |
        tar -cf - -T - | xz -T0 >"$res/hlo.tar.xz")
      ;;
    nhwc) XLA_FLAGS="$XLA_FLAGS --xla_gpu_force_conv_nhwc" go_shapes go-nhwc "${PEAK_TFLOPS:-495}" ;;
    phase) go_shapes go-phase "${PEAK_TFLOPS:-495}" -convt-impl phase ;;
    samplers)
      go_shapes go-samplers "${PEAK_TFLOPS:-495}" -training=false -sampling=true
      step pt-samplers "${pt_bench[@]}" --tf32 --no-training --out "$res/pt-samplers.md"
      ;;
    ptbest)
      for variant in ${PT_VARIANTS:-eager channels-last autocast-bf16+channels-last compile channels-last+compile}; do
        # shellcheck disable=SC2046,SC2086 # one flag per +-separated word
        step "pt-best-$variant" "${pt_bench[@]}" --tf32 --no-sampling $([[ $variant == eager ]] || printf -- '--%s ' ${variant//+/ }) --out "$res/pt-best-$variant.md"
      done
      ;;
    ptprofile) step pt-profile python3 baselines/lebm_bench.py --device cuda --shapes "$dump_shape" --methods ed --batch "$batch" --iters 3 --prior-iters 0 --no-sampling --tf32 --profile "$res/pt-profile" ;;
    nsys)
      local nsys
      # shellcheck disable=SC2012
      nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
      if [[ -z $nsys ]]; then
        echo "### nsys: skipped, no nsys on this machine"
        continue
      fi
      step nsys "$nsys" profile -o "$work/go-prof" --stats=false "${go_bench[@]}" -shapes "$dump_shape" -methods ed -prior-iters 0 -iters 3
      "$nsys" stats -r cuda_gpu_kern_sum "$work/go-prof.nsys-rep" >"$res/nsys-stats.txt" 2>&1
      ;;
    *) echo "### unknown step $what (valid: check pytorch go bf16 fp32 dump nhwc ptbest ptprofile nsys phase samplers)" ;;
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
