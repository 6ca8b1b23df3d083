#!/usr/bin/env bash
# Writes a run folder of train-classifier, as the binary given writes it,
# for TestResumesARunOfAnEarlierVersion: a tiny classifier (SimpleGo, 512
# Fashion-MNIST images, batches of 256) after epoch 1 (step 2), and the
# summary of the same run trained 2 epochs without stopping.
#
#   cmd/train-classifier/testdata/make-fixture.sh TRAIN_CLASSIFIER_BINARY OUT_FOLDER
set -euo pipefail
bin=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-backend go -train-n 512 -batch 256 -set "classifier_hidden=16,8")
"$bin" "${flags[@]}" -epochs 1 -out "$tmp/stopped" >/dev/null 2>&1
"$bin" "${flags[@]}" -epochs 2 -out "$tmp/uninterrupted" >/dev/null 2>&1
mkdir -p "$out"
cp -r "$tmp/stopped/checkpoint" "$out/"
cp "$tmp/uninterrupted/summary.json" "$out/uninterrupted-summary.json"
