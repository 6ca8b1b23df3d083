#!/usr/bin/env bash
# Runs the project's test suite on a fresh machine: installs what the tests
# need (Debian's Fashion-MNIST for the end-to-end test, shellcheck for the
# scripts, the XLA CPU PJRT plugin through pip), then gofmt, shellcheck,
# go vet, go test on every package on SimpleGo, and the numerical packages
# again on XLA CPU (xla_packages: each takes under 20 s there; lebm and the
# commands compile dozens of training graphs and take minutes on XLA CPU,
# see docs/gomlx.md). Pass extra `go test` flags as arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || need_apt+=(dataset-fashion-mnist)
command -v shellcheck >/dev/null || need_apt+=(shellcheck)
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
go vet ./...
go run ./cmd/install-pjrt -cpu

xla_packages=(./losses ./nets ./density ./fid ./classifier ./ema ./eval ./backend)
EDLEBM_TEST_BACKEND=go go test -timeout 40m "$@" ./...
EDLEBM_TEST_BACKEND=cpu go test -timeout 20m "$@" "${xla_packages[@]}"
