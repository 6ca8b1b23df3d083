#!/usr/bin/env bash
# Runs the project's test suite on a fresh machine: installs what the tests
# need (Debian's Fashion-MNIST for the end-to-end test), then go vet and
# go test on every package. Pass extra `go test` flags as arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || need_apt+=(dataset-fashion-mnist)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -timeout 40m "$@" ./...
