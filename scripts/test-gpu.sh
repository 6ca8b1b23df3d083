#!/usr/bin/env bash
# The test suite on a GPU, for a device machine that has no Go:
#
#   scripts/test-gpu.sh build DIR [PKG...]   (here, with Go)
#   scripts/test-gpu.sh run DIR [LOG]        (there)
#
# build compiles the test binaries of PKG (default: every package whose
# tests build GoMLX graphs) into one archive, DIR/tests.tar.xz, and copies
# Debian's Fashion-MNIST files into DIR/fashion-mnist when a listed
# package's tests read them. DIR must lie inside the repository and be
# ignored by git (.gpu/ is); carry it to the device machine.
#
# run unpacks the archive, installs the Fashion-MNIST files where the tests
# look for them, points the tests at XLA with the CUDA plugin
# (scripts/cuda-env.sh; $EDLEBM_TEST_BACKEND, see internal/testutil) and
# runs each package's tests in its folder, like go test. The output goes to
# the terminal and to LOG (default DIR/tests.log); the last line counts the
# packages: "N passed, M failed".
#
# The whole default set with the data is about 50 MB, inside the device
# tool's 64 MiB carry; pass fewer packages to carry less. With
# EDLEBM_TEST_BACKEND already set (say to go), run uses that backend instead
# of the CUDA plugin: a dry run of the archive on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

graph_pkgs=(nets losses sampling lebm fid density classifier checkpoint ema
  cmd/train-toy cmd/toy-studies cmd/train-lebm lebmeval cmd/train-classifier)
fashion_pkgs=(cmd/train-lebm lebmeval cmd/train-classifier)
fashion_dir=/usr/share/datasets/fashion-mnist

usage() {
  echo "usage: scripts/test-gpu.sh build DIR [PKG...] | run DIR [LOG]" >&2
  exit 2
}

# binary_name turns a package path into its test binary's file name.
binary_name() { echo "${1//\//_}.test"; }

build() {
  local dir=$1
  shift
  local pkgs=("$@")
  if [[ ${#pkgs[@]} -eq 0 ]]; then pkgs=("${graph_pkgs[@]}"); fi
  if ! git check-ignore -q "$dir/x"; then
    echo "test-gpu: $dir is not ignored by git; use a folder such as .gpu/" >&2
    exit 1
  fi
  rm -rf "${dir:?}" && mkdir -p "$dir/bin"
  local needs_fashion=0
  for pkg in "${pkgs[@]}"; do
    echo "building the tests of ./$pkg"
    CGO_ENABLED=1 go test -c -ldflags="-s -w" -o "$dir/bin/$(binary_name "$pkg")" "./$pkg"
    for f in "${fashion_pkgs[@]}"; do
      if [[ $pkg == "$f" ]]; then needs_fashion=1; fi
    done
  done
  printf '%s\n' "${pkgs[@]}" >"$dir/bin/packages"
  tar -C "$dir/bin" -cf - . | xz -T1 -9e >"$dir/tests.tar.xz"
  rm -rf "${dir:?}/bin"
  if [[ $needs_fashion == 1 ]]; then
    mkdir -p "$dir/fashion-mnist"
    cp "$fashion_dir"/*.gz "$dir/fashion-mnist/"
  fi
  du -sh "$dir"
}

run() {
  local dir=$1 log=${2:-$1/tests.log}
  [[ -f $dir/tests.tar.xz ]] || { echo "test-gpu: no $dir/tests.tar.xz (run build first)" >&2; exit 1; }
  local bin
  bin=$(mktemp -d)
  xz -dc "$dir/tests.tar.xz" | tar -C "$bin" -xf -
  if [[ -d $dir/fashion-mnist && ! -f $fashion_dir/train-images-idx3-ubyte.gz ]]; then
    mkdir -p "$fashion_dir" && cp "$dir"/fashion-mnist/*.gz "$fashion_dir/"
  fi
  if [[ -z ${EDLEBM_TEST_BACKEND:-} ]]; then
    # shellcheck source=scripts/cuda-env.sh
    source scripts/cuda-env.sh || { echo "test-gpu: no CUDA PJRT plugin" >&2; exit 1; }
    export EDLEBM_TEST_BACKEND=$GOMLX_BACKEND
  fi
  local passed=0 failed=0 root=$PWD
  {
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), EDLEBM_TEST_BACKEND=$EDLEBM_TEST_BACKEND"
    nvidia-smi -L 2>/dev/null || echo "# nvidia-smi not available"
    while read -r pkg; do
      local start=$SECONDS
      if (cd "$root/$pkg" && "$bin/$(binary_name "$pkg")" -test.timeout 20m); then
        echo "ok   ./$pkg $((SECONDS - start))s"
        passed=$((passed + 1))
      else
        echo "FAIL ./$pkg $((SECONDS - start))s"
        failed=$((failed + 1))
      fi
    done <"$bin/packages"
    echo "$passed passed, $failed failed"
  } 2>&1 | tee "$log"
  rm -rf "$bin"
}

case ${1:-} in
  build) [[ $# -ge 2 ]] || usage; shift; build "$@" ;;
  run) [[ $# -ge 2 ]] || usage; run "$2" "${3:-}" ;;
  *) usage ;;
esac
