#!/usr/bin/env bash
# The mistakes of issue 16's first hour as a user makes them: bad flag
# values, an -out that is a file, an impossible -batch, a picture saved as a
# checkpoint's LATEST, a step-N that is a file, eval-lebm on a folder
# without a run. Writes, per case, the command, exit code, seconds, peak
# memory (GNU time), the output's length and the message's start, and whether a
# folder was left behind, to OUT (default: print) as a Markdown table.
# BIN_DIR holds train-lebm, eval-lebm and train-toy (default: built here).
#
#   scripts/first-hour-errors.sh [BIN_DIR] [OUT]
set -euo pipefail
bin=${1:-}
out=${2:-}
cd "$(dirname "$0")/.."
. scripts/bad-file-lib.sh
if [ -z "$bin" ]; then
  go build -o bin/ ./cmd/train-lebm ./cmd/eval-lebm ./cmd/train-toy
  bin=bin
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "not a folder" >"$work/a-file"
mkdir -p "$work/png/checkpoint" "$work/stepfile/checkpoint"
/usr/bin/python3 -c "import sys; sys.stdout.buffer.write(b'\x89PNG\r\n\x1a\n' + bytes(83000))" >"$work/png/checkpoint/LATEST"
echo step-000000005 >"$work/stepfile/checkpoint/LATEST"
touch "$work/stepfile/checkpoint/step-000000005"

table="| case | command | exit | seconds | peak MiB | output bytes | message (start) | folder left |\n|---|---|---|---|---|---|---|---|\n"
# row NAME LEFT CMD...: runs CMD (its first word a command in $bin) and
# checks whether the path LEFT, which a failed command should not create,
# exists afterwards ("" for no such check).
row() {
  local name=$1 folder=$2 cmd=$3
  shift 3
  [ -z "$folder" ] || rm -rf "$folder"
  local cells len left=no
  cells=$(measure "$work" 120 "$bin/$cmd" "$@")
  len=$(wc -c <"$work/output")
  if [ -z "$folder" ]; then left=–; elif [ -e "$folder" ]; then left=yes; fi
  local shown="$cmd $*"
  shown=${shown//$work/…}
  # measure's cells: exit | seconds | peak MiB | message; the message is cut to 220 characters here.
  IFS='|' read -r code secs mib first <<<"$cells"
  first=$(printf "%s" "${first# }" | sed 's/[[:cntrl:]]/?/g')
  table+="| $name | \`$shown\` | $code| $secs| $mib| $len | ${first:0:220} | $left |\n"
}

fmnist=(-backend go)
row "NaN learning rate" "$work/run" train-lebm "${fmnist[@]}" -lr-gen NaN -out "$work/run"
row "zero epochs" "$work/run" train-lebm "${fmnist[@]}" -epochs 0 -out "$work/run"
row "-out is a file" "" train-lebm "${fmnist[@]}" -out "$work/a-file"
row "batch larger than the data" "$work/run" train-lebm "${fmnist[@]}" -batch 100000 -out "$work/run"
row "picture saved as LATEST" "$work/png/metrics.jsonl" train-lebm "${fmnist[@]}" -out "$work/png"
row "step-N is a file" "$work/stepfile/metrics.jsonl" train-lebm "${fmnist[@]}" -out "$work/stepfile"
row "eval-lebm, no run there" "$work/norun" eval-lebm -backend go -run "$work/norun"
row "eval-lebm, step-N is a file" "$work/stepfile/eval" eval-lebm -backend go -run "$work/stepfile"
row "train-toy: bad -lr" "$work/toy" train-toy -backend go -lr -1 -out "$work/toy"
row "train-toy: bad -ed-t" "$work/toy" train-toy -backend go -ed-t -1 -out "$work/toy"
write_table "$out" "$table"
