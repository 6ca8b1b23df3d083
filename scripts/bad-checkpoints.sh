#!/usr/bin/env bash
# Damaged checkpoints as a user meets them: `eval-lebm -run RUN` on copies
# of a train-lebm run whose checkpoint was damaged in each of the ways
# issue 22 lists. Writes, per case, the exit code, seconds, peak memory
# (GNU time's maximum resident set) and the first line of the message, to
# OUT (default: print) as a Markdown table.
#
#   scripts/bad-checkpoints.sh RUN [EVAL_LEBM_BINARY] [OUT]
#
# RUN: a train-lebm output folder (e.g. train-lebm -epochs 1 -train-size 256
# -out /tmp/run). Memory is capped at 6 GiB (ulimit -v) so that a loader
# that trusts the metadata fails instead of exhausting the machine.
set -euo pipefail
run=${1:?usage: bad-checkpoints.sh RUN [EVAL_LEBM_BINARY] [OUT]}
bin=${2:-}
out=${3:-}
cd "$(dirname "$0")/.."
. scripts/bad-file-lib.sh
bin=$(command_binary "$bin" eval-lebm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# damage NAME PYTHON: copies RUN to $work/NAME and runs PYTHON on its
# checkpoint's metadata (variable m, the decoded JSON; j, its path; b, the
# .bin's path).
damage() {
  local name=$1 code=$2
  cp -r "$run" "$work/$name"
  local step
  step=$(cat "$work/$name/checkpoint/LATEST")
  python3 - "$work/$name/checkpoint/$step" <<EOF
import glob, gzip, json, sys
j = glob.glob(sys.argv[1] + "/*.json")[0]
b = j[:-5] + ".bin"
m = json.load(open(j))
v = m["Variables"]
$code
if m is not None:
    json.dump(m, open(j, "w"))
EOF
}

damage null-metadata 'open(j, "w").write("null"); m = None'
damage empty-scope 'm["Params"][0]["Scope"] = ""'
damage no-dtype 'del v[1]["DType"]'
damage negative-dimension 'v[1]["Dimensions"] = [-3]'
damage huge-shape 'v[1]["Dimensions"] = [1 << 20, 1 << 20]'
damage 8GiB-declared 'v[-1]["Dimensions"] = [1 << 31]; v[-1]["DType"] = "Float32"; v[-1]["Length"] = 1 << 33'
damage gzip-bomb 'open(b, "wb").write(b"gomlx_checkpoints\x04gzip" + gzip.compress(bytes(1 << 30), 9))'
damage truncated-data 'd = open(b, "rb").read(); open(b, "wb").write(d[: len(d) // 2])'

table="| damage | exit | seconds | peak MiB | message |\n|---|---|---|---|---|\n"
for dir in "$work"/*/; do
  name=$(basename "$dir")
  table+="| $name | $(measure "$work" 60 "$bin" -run "$dir" -backend go -out "$work/eval-$name") |\n"
done
write_table "$out" "$table"
