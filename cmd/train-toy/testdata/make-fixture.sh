#!/usr/bin/env bash
# Writes a run folder of train-toy, as the binary given writes it, for
# TestResumesARunOfAnEarlierVersion: a tiny ED model on 25gaussians
# (SimpleGo) stopped at step 4, and the log-density curve of the same run
# trained to step 8 without stopping.
#
#   cmd/train-toy/testdata/make-fixture.sh TRAIN_TOY_BINARY OUT_FOLDER
set -euo pipefail
bin=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-backend go -data 25gaussians -methods ed -hidden "8,8" -batch 16 -eval-every 2 -eval-n 100 -grid 10 -samples 10 -sample-steps 2)
"$bin" "${flags[@]}" -steps 4 -out "$tmp/stopped" >/dev/null 2>&1
"$bin" "${flags[@]}" -steps 8 -out "$tmp/uninterrupted" >/dev/null 2>&1
mkdir -p "$out/25gaussians/ed"
cp -r "$tmp/stopped/25gaussians/ed/checkpoint" "$tmp/stopped/25gaussians/ed/mse.csv" "$out/25gaussians/ed/"
cp "$tmp/uninterrupted/25gaussians/ed/mse.csv" "$out/uninterrupted-mse.csv"
