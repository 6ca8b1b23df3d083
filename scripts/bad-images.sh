#!/usr/bin/env bash
# Bad CelebA images as a user meets them: `train-lebm -data celeba64
# -data-dir ROOT` on a small CelebA folder (eight 178×218 JPEGs made with
# PIL and list_eval_partition.txt) in which one training image is replaced
# by each bad file in turn. Writes, per file, the exit code, seconds, peak
# memory (GNU time) and the message to OUT (default: print) as a Markdown
# table. Memory is capped at 6 GiB (ulimit -v) and each run at 60 s; the
# valid folder itself is the first row (one SimpleGo training step and
# its epoch-end pictures with short chains, up to 10 minutes).
#
#   scripts/bad-images.sh [TRAIN_LEBM_BINARY] [OUT]
set -euo pipefail
bin=${1:-}
out=${2:-}
cd "$(dirname "$0")/.."
. scripts/bad-file-lib.sh
bin=$(command_binary "$bin" train-lebm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Debian's python3 carries PIL; the bad files are patched valid JPEGs.
/usr/bin/python3 - "$work" <<'PY'
import io, os, struct, sys
from PIL import Image
d = sys.argv[1]
os.makedirs(f"{d}/good/img_align_celeba")
with open(f"{d}/good/list_eval_partition.txt", "w") as part:
    for i in range(1, 9):
        name = f"{i:06d}.jpg"
        Image.new("RGB", (178, 218), (30 * i, 255 - 30 * i, 100)).save(f"{d}/good/img_align_celeba/{name}", quality=90)
        part.write(f"{name} {0 if i <= 6 else (1 if i == 7 else 2)}\n")
good = open(f"{d}/good/img_align_celeba/000001.jpg", "rb").read()

def declared(w, h):
    # The SOF0 segment: marker, length, precision, then height and width.
    i = good.index(b"\xff\xc0")
    return good[:i + 5] + struct.pack(">HH", h, w) + good[i + 9:]

def small():
    b = io.BytesIO()
    Image.new("RGB", (100, 100)).save(b, format="JPEG")
    return b.getvalue()

bad = {
    "declares-65000x65000.jpg": declared(65000, 65000),
    "empty.jpg": b"",
    "not-a-jpeg.jpg": b"this is not an image\n",
    "truncated-half.jpg": good[: len(good) // 2],
    "100x100.jpg": small(),
    "5-MiB-of-zeros.jpg": bytes(5 << 20),
}
os.makedirs(f"{d}/bad")
for name, b in bad.items():
    open(f"{d}/bad/{name}", "wb").write(b)
PY

# train LIMIT_S: one run of train-lebm on $work/root.
train() {
  measure "$work" "$1" "$bin" -data celeba64 -data-dir "$work/root" -backend go \
    -epochs 1 -batch 6 -train-size 6 -recon 1 -grid 4 -gen-steps 5 -test-posterior-steps 5 -out "$work/run"
}
table="| image 000001.jpg | bytes | exit | seconds | peak MiB | message |\n|---|---|---|---|---|---|\n"
cp -r "$work/good" "$work/root"
table+="| valid (178×218) | $(stat -c %s "$work/root/img_align_celeba/000001.jpg") | $(train 600) |\n"
for f in "$work"/bad/*; do
  rm -rf "$work/root" "$work/run"
  cp -r "$work/good" "$work/root"
  cp "$f" "$work/root/img_align_celeba/000001.jpg"
  table+="| $(basename "$f") | $(stat -c %s "$f") | $(train 60) |\n"
done
write_table "$out" "$table"
