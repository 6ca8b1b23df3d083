#!/usr/bin/env bash
# Measures the scoring service under load on the loopback interface, beside
# the batch command on the same model, and writes the results to OUT (a
# folder, default docs/results/serving/load):
#
#   - score-images' images per second on IMAGES once loaded and compiled
#     (the limit: the same model and batch size with no HTTP in between),
#     from its times on all of IMAGES and on half of them;
#   - the service's images per second and p50/p99 latency with hey
#     (github.com/rakyll/hey v0.1.5, installed with go install) at 1, 8
#     and 64 concurrent clients, one image a request, LOAD_SECONDS each
#     (default 30);
#   - its resident memory every 10 s over SOAK_SECONDS (default 600) of
#     load from 8 clients (memory.csv, memory.png);
#   - kill -9 under load, then a restart: the seconds to ready.
#
#   scripts/serve-load.sh RUN [IMAGES [OUT]]
#
# IMAGES defaults to the first 2048 Fashion-MNIST test images (Debian's
# dataset-fashion-mnist), written as PNG files into a temporary folder.
#
# Run it on an idle machine: the numbers are the CPU's, named in summary.md.
# Every request goes to 127.0.0.1 and every load is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: serve-load.sh RUN [IMAGES [OUT]]}
images=${2:-}
out=${3:-docs/results/serving/load}
load_seconds=${LOAD_SECONDS:-30}
soak_seconds=${SOAK_SECONDS:-600}
mkdir -p "$out"
work=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/" ./cmd/serve ./cmd/score-images
label=$images
if [ -z "$images" ]; then
  images=$work/fashion-mnist-test
  label="(the first 2048 Fashion-MNIST test images)"
  /usr/bin/python3 - "$images" <<'PY'
import gzip, os, struct, sys, zlib
out = sys.argv[1]
os.makedirs(out)
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()[16:]
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
for i in range(2048):
    img = raw[i * 784:(i + 1) * 784]
    rows = b"".join(b"\0" + img[r * 28:(r + 1) * 28] for r in range(28))
    with open("%s/%04d.png" % (out, i), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
fi
hey=$(go env GOPATH)/bin/hey
[ -x "$hey" ] || go install github.com/rakyll/hey@v0.1.5
cpu=$(lscpu | sed -n 's/^Model name: *//p')
one=$(find "$images" -name '*.png' | sort | sed -n 1p)
n=$(find "$images" -name '*.png' | wc -l)
port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port

# start: starts the service (pid), waits for /readyz, and sets took to the
# seconds that took.
took=""
start() {
  local t0
  t0=$(date +%s.%N)
  "$work/serve" -run "$run" -listen "127.0.0.1:$port" -max-in-flight 128 >>"$out/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1200); do
    if curl -sf "$url/readyz" >/dev/null; then
      took=$(echo "$(date +%s.%N) - $t0" | bc)
      return 0
    fi
    sleep 0.1
  done
  echo "serve-load: not ready" >&2
  exit 1
}

# score-images' rate once loaded and compiled: the whole folder and its
# first half scored apart, the difference of their times taken by the
# difference of their images.
half=$((n / 2))
mkdir -p "$work/half"
find "$(realpath "$images")" -name '*.png' | sort | sed -n "1,${half}p" | while read -r f; do ln -s "$f" "$work/half/"; done
# timed FOLDER: score-images' wall seconds on FOLDER.
timed() {
  local t0
  t0=$(date +%s.%N)
  "$work/score-images" -run "$run" -images "$1" -batch 64 -out "$work/scores-$RANDOM" >"$work/score-images.log" 2>&1
  echo "$(date +%s.%N) - $t0" | bc
}
echo "score-images on $half and on $n images" >&2
half_seconds=$(timed "$work/half")
batch_seconds=$(timed "$images")
batch_rate=$(echo "($n - $half) / ($batch_seconds - $half_seconds)" | bc -l)

: >"$out/serve.log"
start
ready=$took
echo "ready after $ready s" >&2
rows=""
for c in 1 8 64; do
  "$hey" -z "${load_seconds}s" -c "$c" -t 60 -m POST -T image/png -D "$one" "$url/v1/score" >"$out/hey-c$c.txt"
  rps=$(sed -n 's/^ *Requests\/sec:[[:space:]]*//p' "$out/hey-c$c.txt")
  p50=$(sed -n 's/^ *50%% in \([0-9.]*\) secs/\1/p' "$out/hey-c$c.txt")
  p99=$(sed -n 's/^ *99%% in \([0-9.]*\) secs/\1/p' "$out/hey-c$c.txt")
  codes=$(sed -n '/Status code distribution/,/^$/p' "$out/hey-c$c.txt" | grep -oE '\[[0-9]+\][[:space:]]+[0-9]+ responses' | tr -s ' \t' ' ' | paste -sd, -)
  rows+="| $c | $(printf '%.1f' "$rps") | $(printf '%.0f' "$(echo "$p50 * 1000" | bc)") | $(printf '%.0f' "$(echo "$p99 * 1000" | bc)") | $(printf '%.0f' "$(echo "100 * $rps / $batch_rate" | bc -l)") % | $codes |"$'\n'
  echo "c=$c: $rps images/s, p50 $p50 s, p99 $p99 s ($codes)" >&2
done
curl -s "$url/metrics" | grep -E '^edlebm_batch_rows_(sum|count)' >"$out/batch-rows.txt"

echo "soak: $soak_seconds s from 8 clients, memory every 10 s" >&2
echo "seconds,rss_mib" >"$out/memory.csv"
"$hey" -z "${soak_seconds}s" -c 8 -t 60 -m POST -T image/png -D "$one" "$url/v1/score" >"$out/hey-soak.txt" &
heypid=$!
t0=$(date +%s)
while kill -0 "$heypid" 2>/dev/null; do
  echo "$(($(date +%s) - t0)),$(echo "$(ps -o rss= -p "$pid") / 1024" | bc -l | xargs printf '%.1f')" >>"$out/memory.csv"
  sleep 10
done
wait "$heypid"

echo "kill -9 under load, then a restart" >&2
"$hey" -z 10s -c 8 -t 60 -m POST -T image/png -D "$one" "$url/v1/score" >"$out/hey-kill.txt" &
heypid=$!
sleep 3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
start
restart=$took
wait "$heypid" || true
after=$(curl -s -o /dev/null -w '%{http_code}' -F "image=@$one" "$url/v1/score")

/usr/bin/python3 - "$out" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
out = sys.argv[1]
rows = list(csv.DictReader(open(out + "/memory.csv")))
t = [int(r["seconds"]) for r in rows]
m = [float(r["rss_mib"]) for r in rows]
plt.figure(figsize=(6, 3))
plt.plot(t, m)
plt.xlabel("seconds of load (8 clients)")
plt.ylabel("resident memory, MiB")
plt.ylim(0, max(m) * 1.2)
plt.tight_layout()
plt.savefig(out + "/memory.png", dpi=100)
PY
first=$(sed -n '2,7p' "$out/memory.csv" | cut -d, -f2 | paste -sd+ | bc -l)
last=$(tail -6 "$out/memory.csv" | cut -d, -f2 | paste -sd+ | bc -l)
soak_rps=$(sed -n 's/^ *Requests\/sec:[[:space:]]*//p' "$out/hey-soak.txt")
{
  echo "# The scoring service under load"
  echo
  echo "\`scripts/serve-load.sh $run $label\` on $(date -u +%Y-%m-%d), $cpu ($(nproc) cores), XLA CPU; one image a request; raw hey outputs beside this file."
  echo
  echo "score-images on the same images, batches of 64: $(printf '%.1f' "$batch_rate") images/s once loaded and compiled ($n images in $(printf '%.1f' "$batch_seconds") s, $half in $(printf '%.1f' "$half_seconds") s: the difference's rate)."
  echo "The service was ready $(printf '%.1f' "$ready") s after it started (loading and compiling batch sizes 1, 8, 64)."
  echo
  echo "| clients | images/s | p50 ms | p99 ms | of score-images' rate | status codes |"
  echo "|---|---|---|---|---|---|"
  printf '%s' "$rows"
  echo
  echo "Batches: $(tr '\n' ' ' <"$out/batch-rows.txt")"
  echo
  echo "Soak: $soak_seconds s from 8 clients at $(printf '%.1f' "$soak_rps") images/s; resident memory $(printf '%.1f' "$(echo "$first / 6" | bc -l)") MiB over the first minute, $(printf '%.1f' "$(echo "$last / 6" | bc -l)") MiB over the last (memory.csv, memory.png)."
  echo
  echo "kill -9 under load from 8 clients: ready again $(printf '%.1f' "$restart") s after the restart; a request after it: $after."
} >"$out/summary.md"
cat "$out/summary.md"
