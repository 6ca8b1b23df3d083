#!/usr/bin/env bash
# Writes a run folder of train-table, as the binary given writes it, for
# TestResumesARunOfAnEarlierVersion: a tiny ED model of mixed.csv
# (SimpleGo) stopped at step 4, and the losses of the same run trained to
# step 8 without stopping. The runs read a copy of mixed.csv that is then
# removed: the test resumes with the table at a new path.
#
#   cmd/train-table/testdata/make-fixture.sh TRAIN_TABLE_BINARY OUT_FOLDER
set -euo pipefail
bin=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/mixed.csv" "$tmp/"
flags=(-backend go -data "$tmp/mixed.csv" -column "size=categorical:ordinal:small,medium,large" -methods med
  -set toy_mlp_hidden=8 -batch 16 -checkpoint-every 2 -samples 5 -sweeps 2)
"$bin" "${flags[@]}" -steps 4 -out "$tmp/stopped" >/dev/null 2>&1
"$bin" "${flags[@]}" -steps 8 -out "$tmp/uninterrupted" >/dev/null 2>&1
mkdir -p "$out/med"
cp "$tmp/stopped/table.json" "$out/"
cp -r "$tmp/stopped/med/checkpoint" "$tmp/stopped/med/metrics.jsonl" "$out/med/"
cp "$tmp/uninterrupted/med/metrics.jsonl" "$out/uninterrupted-metrics.jsonl"
