#!/usr/bin/env bash
# Sends the scoring service every kind of bad input and fault, and writes
# a Markdown table of what each got (status code, message, time) and
# whether the service still answered a good request afterwards.
#
#   scripts/serve-faults.sh LEBM_RUN GOOD_IMAGE VECTORS_RUN [OUT.md]
#
# LEBM_RUN is a train-lebm run folder, GOOD_IMAGE an image it scores,
# VECTORS_RUN a train-vectors run folder (for the rows' cases). Everything
# goes to loopback addresses only. Default OUT: docs/results/serving/faults.md.
set -euo pipefail
cd "$(dirname "$0")/.."
lebm_run=${1:?usage: serve-faults.sh LEBM_RUN GOOD_IMAGE VECTORS_RUN [OUT.md]}
good=$(realpath "${2:?}")
vectors_run=${3:?}
out=${4:-docs/results/serving/faults.md}
work=$(mktemp -d)
bin=$work/serve
go build -o "$bin" ./cmd/serve
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
token=faults-$RANDOM$RANDOM
printf '%s\n' "$token" >"$work/token"

# start RUN PORT [FLAGS...]: starts serve and waits until it is ready.
start() {
  local run=$1 port=$2
  shift 2
  "$bin" -run "$run" -listen "127.0.0.1:$port" -token-file "$work/token" -max-body $((1 << 20)) "$@" >>"$work/serve-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return 0
    sleep 0.2
  done
  echo "serve-faults: the service on $port was not ready" >&2
  cat "$work/serve-$port.log" >&2
  exit 1
}

rows=""
# record CASE EXPECTED PORT GOOD_ARGS... -- CURL_ARGS...: sends one request
# with curl, then a good one, and adds a table row.
record() {
  local name=$1 expected=$2 port=$3
  shift 3
  local goodargs=()
  while [ "$1" != "--" ]; do goodargs+=("$1"); shift; done
  shift
  local start end code msg after
  start=$(date +%s.%N)
  code=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 60 "$@" || true)
  end=$(date +%s.%N)
  msg=$(head -c 300 "$work/body" | tr '\n|' ' /' || true)
  after=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "${goodargs[@]}" "http://127.0.0.1:$port/v1/score" || true)
  rows+="| $name | $expected | $code | $(printf '%.2f' "$(echo "$end - $start" | bc)") | \`$msg\` | $after |"$'\n'
  echo "$name: $code ($expected expected); a good request after it: $after" >&2
}

lp=$((20000 + RANDOM % 20000))
vp=$((lp + 1))
start "$lebm_run" "$lp"
start "$vectors_run" "$vp"
auth=(-H "Authorization: Bearer $token")
img=(-F "image=@$good")
url=http://127.0.0.1:$lp/v1/score
vurl=http://127.0.0.1:$vp/v1/score
dim=$(curl -s "${auth[@]}" "http://127.0.0.1:$vp/v1/info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["dim"])')
goodrow=$(python3 -c "print('{\"rows\": [[' + ','.join(['0.5'] * $dim) + ']]}')")
vgood=(-H 'Content-Type: application/json' --data "$goodrow")

# Inputs made here.
head -c $(($(stat -c %s "$good") / 2)) "$good" >"$work/truncated.png"
python3 - "$work" <<'PY'
import struct, sys, zlib
work = sys.argv[1]
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
def png(w, h, colour, rows):
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, colour, 0, 0, 0)) + \
        chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')
open(work + '/huge.png', 'wb').write(png(10000, 10000, 0, b''))           # 100 megapixels declared, no data
open(work + '/small.png', 'wb').write(png(16, 16, 0, b''.join(b'\x00' + bytes(16) for _ in range(16))))
open(work + '/rgb.png', 'wb').write(png(28, 28, 2, b''.join(b'\x00' + bytes(range(84)) for _ in range(28))))
open(work + '/big.bin', 'wb').write(b'\x89PNG' + bytes(2 << 20))
PY
printf -- '--x\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\nabc' >"$work/malformed"

record "malformed multipart (no closing boundary)" 400 "$lp" "${img[@]}" -- "${auth[@]}" -H 'Content-Type: multipart/form-data; boundary=x' --data-binary @"$work/malformed" "$url"
record "truncated PNG" 422 "$lp" "${img[@]}" -- "${auth[@]}" -F "image=@$work/truncated.png" "$url"
record "100-megapixel header" 422 "$lp" "${img[@]}" -- "${auth[@]}" -F "image=@$work/huge.png" "$url"
record "image smaller than the run's (16×16)" 422 "$lp" "${img[@]}" -- "${auth[@]}" -F "image=@$work/small.png" "$url"
record "RGB image to a grey model (converted, as score-images does)" 200 "$lp" "${img[@]}" -- "${auth[@]}" -F "image=@$work/rgb.png" "$url"
record "body over the limit (2 MiB, limit 1 MiB)" 413 "$lp" "${img[@]}" -- "${auth[@]}" -H 'Content-Type: image/png' --data-binary @"$work/big.bin" "$url"
record "missing token" 401 "$lp" "${img[@]}" -- "${img[@]}" "$url"
record "wrong token" 401 "$lp" "${img[@]}" -- -H "Authorization: Bearer not-$token" "${img[@]}" "$url"
record "NaN in a row" 400 "$vp" "${vgood[@]}" -- "${auth[@]}" -H 'Content-Type: application/json' --data '{"rows": [[NaN]]}' "$vurl"
nullrow=$(python3 -c "print('{\"rows\": [[' + ','.join(['0.5'] * ($dim - 1) + ['null']) + ']]}')")
record "null in a row" 422 "$vp" "${vgood[@]}" -- "${auth[@]}" -H 'Content-Type: application/json' --data "$nullrow" "$vurl"
record "a row of the wrong width" 422 "$vp" "${vgood[@]}" -- "${auth[@]}" -H 'Content-Type: application/json' --data '{"rows": [[1, 2]]}' "$vurl"

# A slow client: opens a connection, sends half its headers, never the rest.
slow=$(python3 - "$lp" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\n")
start = time.time()
s.settimeout(60)
try:
    data = s.recv(4096)
    first = data.split(b"\r\n")[0].decode() if data else "closed without an answer"
except socket.timeout:
    first = "still open after 60 s"
print("%s after %.1f s" % (first, time.time() - start))
PY
)
after=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "${img[@]}" "$url")
rows+="| slow client: half its headers, then nothing | closed after the 5 s header timeout | $slow | | | $after |"$'\n'
echo "slow client: $slow; a good request after it: $after" >&2

# A damaged checkpoint at start: a clear error, and nothing listens.
damaged=$work/damaged
cp -r "$lebm_run" "$damaged"
bin_file=$(find "$damaged/checkpoint/$(cat "$damaged/checkpoint/LATEST")" -name '*.bin')
truncate -s $(($(stat -c %s "$bin_file") / 2)) "$bin_file"
dp=$((lp + 2))
rc=0
timeout 120 "$bin" -run "$damaged" -listen "127.0.0.1:$dp" >"$work/damaged.log" 2>&1 || rc=$?
msg=$(tail -1 "$work/damaged.log" | tr '|' '/' | head -c 300)
listening=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$dp/healthz" || true)
rows+="| damaged checkpoint at start | exit 1, no listener | exit $rc, healthz $listening | | \`$msg\` | |"$'\n'
echo "damaged checkpoint: $msg (healthz: $listening)" >&2

mkdir -p "$(dirname "$out")"
{
  echo "# The scoring service under bad input and faults"
  echo
  echo "\`scripts/serve-faults.sh $lebm_run $2 $vectors_run\` on $(date -u +%Y-%m-%d), $(lscpu | sed -n 's/^Model name: *//p'). Each row: what was sent, the status expected, the status got, seconds to the answer, the answer (first 300 bytes), and the status of a good request sent right after."
  echo
  echo "| case | expected | got | seconds | answer | good request after |"
  echo "|---|---|---|---|---|---|"
  printf '%s' "$rows"
} >"$out"
echo "serve-faults: table in $out" >&2
