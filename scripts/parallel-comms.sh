#!/usr/bin/env bash
# What a data-parallel training step moves between devices, read from the
# step XLA compiled: one sharded step per data-set shape on 2 XLA CPU
# devices (bench-lebm -devices 2, batch 4), its optimised HLO dumped, and
# its collectives summed by scripts/allreduce_bytes.py.
#
#   scripts/parallel-comms.sh [SHAPES]    # default: fashion-mnist,svhn,cifar10,celeba64
set -euo pipefail
shapes=${1:-fashion-mnist,svhn,cifar10,celeba64}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/bench-lebm
for shape in ${shapes//,/ }; do
  dump=$bin/dump-$shape
  XLA_FLAGS="--xla_dump_to=$dump --xla_dump_hlo_as_text" "$bin/bench-lebm" -backend cpu -devices 2 \
    -shapes "$shape" -methods ed -batch 4 -iters 1 -prior-iters 0 -sampling=false >/dev/null
  modules=("$dump"/*Trainer*after_optimizations.txt)
  module=${modules[0]}
  echo "$shape (ED, 2 devices): $(python3 scripts/allreduce_bytes.py "$module" | tr '\n' ' ')"
done
