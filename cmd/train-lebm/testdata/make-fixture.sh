#!/usr/bin/env bash
# Writes a run folder of train-lebm, as the binary given writes it, for
# TestResumesARunOfAnEarlierVersion: a tiny model (SimpleGo, 32
# Fashion-MNIST images, batches of 16) stopped after epoch 1 (step 2), and
# the metrics of the same run trained to epoch 2 without stopping.
#
#   cmd/train-lebm/testdata/make-fixture.sh TRAIN_LEBM_BINARY OUT_FOLDER
set -euo pipefail
bin=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-backend go -train-size 32 -batch 16 -posterior-steps 3 -test-posterior-steps 3 -gen-steps 3 -grid 4 -recon 4
  -set 'lebm_generator_layers=8,4,1,0,8,3,2,1,8,4,2,1,1,4,2,1;lebm_prior_hidden=16,16')
"$bin" "${flags[@]}" -epochs 1 -out "$tmp/stopped" >/dev/null
"$bin" "${flags[@]}" -epochs 2 -out "$tmp/uninterrupted" >/dev/null
mkdir -p "$out"
cp -r "$tmp/stopped/checkpoint" "$tmp/stopped/metrics.jsonl" "$out/"
cp "$tmp/uninterrupted/metrics.jsonl" "$out/uninterrupted.jsonl"
