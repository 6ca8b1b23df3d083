#!/usr/bin/env bash
# Bad PyTorch weight files as a user meets them: `eval-lebm -run RUN
# -inception FILE` with each file of issue 22's list. Writes, per file, the
# exit code, seconds, peak memory (GNU time) and the message to OUT
# (default: print) as a Markdown table. Memory is capped at 6 GiB (ulimit
# -v) and each run at 30 s.
#
#   scripts/bad-weights.sh RUN [EVAL_LEBM_BINARY] [OUT]
set -euo pipefail
run=${1:?usage: bad-weights.sh RUN [EVAL_LEBM_BINARY] [OUT]}
bin=${2:-}
out=${3:-}
cd "$(dirname "$0")/.."
. scripts/bad-file-lib.sh
bin=$(command_binary "$bin" eval-lebm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import struct, sys, os
d = sys.argv[1]
def w(name, b): open(os.path.join(d, name), "wb").write(b)
w("empty.pth", b"")
w("512-zero-bytes.pth", bytes(512))
w("opcode-0xff.pth", b"\x80\x02\xff")
w("long1-without-bytes.pth", b"\x80\x02\x8a\x05")
w("string-of-4GiB.pth", b"\x80\x02X\xff\xff\xff\xff")
w("binunicode8-of-2^40.pth", b"\x80\x02\x8d" + struct.pack("<Q", 1 << 40))
w("odd-setitems.pth", b"\x80\x02}(K\x01u.")
PY
# A legacy torch.save file whose storage declares 2^31 floats.
/usr/bin/python3 - "$work" <<'PY' 2>/dev/null || true
import io, struct, sys, torch
buf = io.BytesIO()
torch.save({"w": torch.zeros(3)}, buf, _use_new_zipfile_serialization=False)
b = buf.getvalue()
i = b.rfind(struct.pack("<q", 3))  # the storage's element count, before its bytes
b = b[:i] + struct.pack("<q", 1 << 31) + b[i + 8:]
open(sys.argv[1] + "/storage-of-8GiB.pth", "wb").write(b)
PY

table="| file | bytes | exit | seconds | peak MiB | message |\n|---|---|---|---|---|---|\n"
for f in "$work"/*.pth; do
  table+="| $(basename "$f") | $(stat -c %s "$f") | $(measure "$work" 30 "$bin" -run "$run" -inception "$f" -backend go -out "$work/eval") |\n"
done
write_table "$out" "$table"
