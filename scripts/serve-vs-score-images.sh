#!/usr/bin/env bash
# Scores a folder of images with score-images and with the scoring
# service — the service's requests of 1 to 64 images sent 8 at a time, so
# that they share batches in every mix — and compares each image's two
# scores; writes the comparison to OUT (default
# docs/results/serving/vs-score-images.md).
#
#   scripts/serve-vs-score-images.sh RUN IMAGES [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: serve-vs-score-images.sh RUN IMAGES [OUT]}
images=$(realpath "${2:?}")
out=${3:-docs/results/serving/vs-score-images.md}
work=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/" ./cmd/serve ./cmd/score-images
"$work/score-images" -run "$run" -images "$images" -out "$work/batch" >"$work/score-images.log" 2>&1
port=$((20000 + RANDOM % 20000))
"$work/serve" -run "$run" -listen "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
# Requests of 1, 2, 3, … 64 images in turn, each its files relative to
# IMAGES (score-images' names), answered into one JSON file each.
(cd "$images" && find . -name '*.png' -o -name '*.jpg' -o -name '*.jpeg' | sed 's|^\./||' | sort) >"$work/files"
/usr/bin/python3 - "$work/files" "$work/requests" <<'PY'
import sys
files = open(sys.argv[1]).read().split()
out, size, i, n = open(sys.argv[2], "w"), 1, 0, 0
while i < len(files):
    out.write("%d %s\n" % (n, " ".join(files[i:i + size])))
    i, size, n = i + size, size % 64 + 1, n + 1
PY
mkdir -p "$work/answers"
send() {
  local n=$1
  shift
  local form=() f
  for f in "$@"; do form+=(-F "image=@$f;filename=$f"); done
  curl -sf "${form[@]}" "http://127.0.0.1:$port/v1/score" >"$work/answers/$n.json"
}
export -f send
export port work
(cd "$images" && xargs -P 8 -L 1 bash -c 'send "$@"' _ <"$work/requests")
mkdir -p "$(dirname "$out")"
/usr/bin/python3 - "$work/batch/scores.csv" "$work/answers" "$out" "$run" "$2" "$(lscpu | sed -n 's/^Model name: *//p')" <<'PY'
import csv, glob, json, sys
# Keyed by base name: a multipart file name reaches the service without
# its folders (Go's Part.FileName), and the walk-through's names are unique.
import os
rows = list(csv.DictReader(open(sys.argv[1])))
batch = {os.path.basename(r["file"]): float(r["score"]) for r in rows}
assert len(batch) == len(rows), "file base names repeat across folders"
served, requests = {}, 0
for p in glob.glob(sys.argv[2] + "/*.json"):
    requests += 1
    for im in json.load(open(p))["images"]:
        served[im["file"]] = im["score"]
assert set(served) == set(batch), "the service scored %d files, score-images %d" % (len(served), len(batch))
rel = sorted(abs(served[f] - batch[f]) / abs(batch[f]) for f in batch)
worst = max(batch, key=lambda f: abs(served[f] - batch[f]) / abs(batch[f]))
with open(sys.argv[3], "w") as o:
    o.write("# The service's scores against score-images'\n\n")
    o.write("`scripts/serve-vs-score-images.sh %s %s`, %s. " % (sys.argv[4], sys.argv[5], sys.argv[6]))
    o.write("%d images: score-images in batches of 64; the service in %d requests of 1 to 64 images sent 8 at a time (batch sizes 1, 8, 64).\n\n" % (len(batch), requests))
    o.write("| | relative difference |\n|---|---|\n")
    o.write("| median | %.2e |\n| largest | %.2e (%s: %.6g against %.6g) |\n" % (rel[len(rel) // 2], rel[-1], worst, served[worst], batch[worst]))
    o.write("\nscores.csv holds 8 significant digits: a relative difference below 1e-7 is the CSV's rounding.\n")
print(open(sys.argv[3]).read())
PY
