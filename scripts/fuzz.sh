#!/usr/bin/env bash
# Fuzzes every parser of user files that has a fuzz target (func FuzzXxx in
# a _test.go file), one target at a time for FUZZTIME each, and writes a
# Markdown table of executions, new corpus entries and findings to OUT
# (default docs/results/fuzz.md). A finding is kept by go test under the
# package's testdata/fuzz/ and becomes a regression test the README's test
# command runs. Exits non-zero if any target found a failure.
#
#   FUZZTIME=5m scripts/fuzz.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/fuzz.md}
fuzztime=${FUZZTIME:-5m}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

rows=""
failed=0
while IFS=: read -r file target; do
  pkg=./$(dirname "$file")
  echo "fuzzing $pkg $target for $fuzztime" >&2
  start=$(date +%s)
  if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
    result="none"
  else
    result="**$(grep -m1 -E -- '--- FAIL|panic:|Failing input written to' "$log" | sed 's/|/\\|/g' || echo "go test failed")**"
    failed=1
  fi
  seconds=$(($(date +%s) - start))
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
  interesting=$(grep -oE 'new interesting: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
  rows+="| $pkg | $target | $seconds | $execs | $interesting | $result |\n"
done < <(grep -rnoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . | sed -E 's|^\./||; s|:[0-9]+:func |:|' | sort)

{
  echo "# Fuzzing the parsers of user files"
  echo
  echo "Command: \`FUZZTIME=$fuzztime scripts/fuzz.sh\`, $(date -u +%Y-%m-%d), $(nproc) cores. Executions and new corpus entries as go test reported them last; a finding is a failing input, kept under the package's testdata/fuzz/."
  echo
  echo "| package | target | seconds | executions | new interesting | findings |"
  echo "|---|---|---|---|---|---|"
  printf "%b" "$rows"
} >"$out"
cat "$out"
exit $failed
