# shellcheck shell=bash
# Shared by scripts/bad-checkpoints.sh, bad-weights.sh and bad-images.sh (sourced, not run):
# running eval-lebm or train-lebm on a bad file as a user would and tabulating the result.
#
# command_binary BIN NAME: prints BIN, or builds bin/NAME from ./cmd/NAME
# and prints that.
command_binary() {
  if [ -n "$1" ]; then
    echo "$1"
  else
    go build -o bin/ "./cmd/$2" && echo "bin/$2"
  fi
}

# measure WORK LIMIT_S CMD...: runs CMD under a 6 GiB address-space cap
# (ulimit -v, so that a reader trusting a header fails instead of
# exhausting the machine) and LIMIT_S seconds, and prints the Markdown
# cells "exit | seconds | peak MiB | message": GNU time's figures and the
# first line that reports the outcome, WORK and timestamps elided. The
# whole output is left in WORK/output.
measure() {
  local work=$1 limit=$2
  shift 2
  local msg code secs kib first
  set +e
  msg=$( (ulimit -v $((6 << 20)); /usr/bin/time -f '%e %M' -o "$work/time" timeout "$limit" "$@") 2>&1)
  code=$?
  set -e
  printf "%s\n" "$msg" >"$work/output"
  read -r secs kib < <(tail -1 "$work/time")
  first=$(echo "$msg" | grep -m1 -E '(eval|train)-lebm:|panic:|fatal error:' || echo "$msg" | tail -1)
  first=${first//$work/…}
  first=$(echo "$first" | sed -E 's|^[0-9/]+ [0-9:]+ ||')
  first=${first//\\/\\\\} # write_table's printf %b would read the message's escapes
  first=${first//|/\\|}
  echo "$code | $secs | $((kib / 1024)) | ${first:0:240}"
}

# write_table OUT TABLE: the table to OUT, or to standard output when OUT is "".
write_table() {
  if [ -n "$1" ]; then printf "%b" "$2" >"$1"; else printf "%b" "$2"; fi
}
