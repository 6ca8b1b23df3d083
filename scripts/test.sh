#!/usr/bin/env bash
# Runs the project's test suite on a fresh machine: installs what the tests
# need (Debian's Fashion-MNIST for the end-to-end test, shellcheck for the
# scripts), then gofmt, shellcheck, go vet and go test on every package.
# Pass extra `go test` flags as arguments.
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
go test -timeout 40m "$@" ./...
