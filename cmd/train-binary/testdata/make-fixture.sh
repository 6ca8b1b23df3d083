#!/usr/bin/env bash
# Writes a run folder of train-binary, as the binary given writes it, for
# TestResumesARunOfAnEarlierVersion: a tiny Bernoulli-ED model (SimpleGo,
# 64 Fashion-MNIST images) stopped at step 3, and the losses and results of
# the same run trained to step 6 without stopping.
#
#   cmd/train-binary/testdata/make-fixture.sh TRAIN_BINARY_BINARY OUT_FOLDER
set -euo pipefail
bin=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-backend go -methods bed -hidden 8 -batch 16 -train-size 64 -test-size 32 -ais-chains 8 -ais-temperatures 10)
"$bin" "${flags[@]}" -steps 3 -out "$tmp/stopped" >/dev/null 2>&1
"$bin" "${flags[@]}" -steps 6 -out "$tmp/uninterrupted" >/dev/null 2>&1
mkdir -p "$out/bed"
cp -r "$tmp/stopped/bed/checkpoint" "$tmp/stopped/bed/losses.csv" "$out/bed/"
cp "$tmp/uninterrupted/bed/losses.csv" "$out/uninterrupted-losses.csv"
cp "$tmp/uninterrupted/results.md" "$out/uninterrupted-results.md"
