#!/usr/bin/env bash
# Runs the project's test suite on a fresh machine: installs what the tests
# need (Debian's Fashion-MNIST for the end-to-end tests, shellcheck for the
# scripts, NumPy for the .npy exchange, scikit-learn's bundled data sets
# for the vector readers, jemalloc for XLA's compiler, the XLA CPU PJRT
# plugin through pip), then gofmt, shellcheck,
# go vet, go test on every package on XLA CPU (but densityrun, on SimpleGo
# only), and the numerical core (losses, nets, lebm, density, discrete,
# sampling) again on SimpleGo, the pure-Go fallback.
# Pass extra `go test` flags as arguments.
#
# On XLA CPU most of the suite's time is compiling graphs: the suite asks
# XLA (XLA_FLAGS) for LLVM optimisation level 0 and for one LLVM module per
# graph instead of pieces compiled on parallel threads — the same HLO
# graphs and HLO passes at less CPU time — and runs it with jemalloc as
# the allocator (docs/testing.md). XLA's older
# loop emitters (--xla_cpu_use_fusion_emitters=false) would halve it again
# but break bit-exact resumption (TestResumeEqualsUninterruptedTraining).
# Benchmarks and training use XLA's defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || need_apt+=(dataset-fashion-mnist)
command -v shellcheck >/dev/null || need_apt+=(shellcheck)
/usr/bin/python3 -c 'import numpy' 2>/dev/null || need_apt+=(python3-numpy) # the .npy and .npz exchange tests
[ -f /usr/lib/python3/dist-packages/sklearn/datasets/data/wine_data.csv ] || need_apt+=(python3-sklearn) # its bundled real data sets
compgen -G '/usr/lib/*/libjemalloc.so.2' >/dev/null || need_apt+=(libjemalloc2) # XLA's compiler allocates less slowly with it
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck -x
python3 scripts/known_bugs.py --check # docs/testing.md's bugs still apply to the code
go vet ./...
go run ./cmd/install-pjrt -cpu

simplego_packages=(./losses ./nets ./lebm ./density ./discrete ./sampling)
fast_compile="--xla_backend_optimization_level=0 --xla_cpu_parallel_codegen_split_count=1"
# Test binaries without DWARF tables link in half the time (-w); the
# longest packages first (measured, docs/first-hour.md), so that none
# finishes alone at the end.
longest=(./lebm ./lebmeval ./cmd/train-lebm ./density ./nets ./losses)
# XLA's compiler spends a sixth of its time in glibc's malloc and free;
# jemalloc takes 16 % off the pass's CPU time (docs/testing.md).
jemalloc=$(compgen -G '/usr/lib/*/libjemalloc.so.2' | head -1)
# sampling's and discrete's tests run thousands of annealing steps, which
# XLA's unoptimised code runs five to eight times slower than it compiles
# them (docs/testing.md): they run with XLA's defaults, after this pass,
# beside the SimpleGo pass.
executing=(./sampling ./discrete)
# densityrun's tests train and measure small run folders end to end (about
# 25 of them): on XLA CPU they are compiling, 105 s of the first pass; on
# SimpleGo 37 s. They run in the SimpleGo pass; the numerical code under
# them (density, sampling, losses) runs on both backends.
mapfile -t others < <(go list ./... | grep -v -x -e github.com/edlebm/edlebm/sampling -e github.com/edlebm/edlebm/discrete -e github.com/edlebm/edlebm/densityrun)
LD_PRELOAD=$jemalloc XLA_FLAGS="${XLA_FLAGS:-} $fast_compile" EDLEBM_TEST_BACKEND=cpu go test -ldflags=-w -timeout 20m "$@" "${longest[@]}" "${others[@]}"
executing_log=$(mktemp)
LD_PRELOAD=$jemalloc EDLEBM_TEST_BACKEND=cpu go test -ldflags=-w -timeout 20m "$@" "${executing[@]}" > "$executing_log" 2>&1 &
executing_pid=$!
# The data-parallel tests run on XLA CPU whatever the tests' backend
# (SimpleGo has one device): the XLA pass ran them. So did density's two
# learning tests, thousands of steps that take SimpleGo 20 s (two thirds of
# this pass) to show what the numerical tests here already pin down: the
# losses, gradients and samplers computed on SimpleGo equal naive loops.
# So did AIS at its defaults on the closed-form targets (the 20-d one
# alone takes SimpleGo 53 s) and discrete AIS on the 8×8 Ising lattice (2
# minutes); the starved-setting, thermodynamic-length and enumerated
# 10-bit tests run the same annealer here.
# Examples open the backend a user gets (auto: XLA CPU here), which the
# XLA pass has run them on already.
simplego_skip='Sharded|TestMethodsLearnAGaussianEnergy|TestBinaryMethodsLearnABitDistribution|TestAISAtItsDefaults|TestAISMatchesKaufman|^Example'
EDLEBM_TEST_BACKEND=go go test -ldflags=-w -timeout 20m -skip "$simplego_skip" "$@" ./densityrun "${simplego_packages[@]}"
executing_status=0
wait "$executing_pid" || executing_status=$?
cat "$executing_log"
rm -f "$executing_log"
exit "$executing_status"
