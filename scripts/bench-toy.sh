#!/usr/bin/env bash
# Side-by-side training speed of the 2-D density experiments: this project
# (go test -bench on SimpleGo) and scripts/toy_bench.py (Debian's PyTorch on
# CPU, with OpenBLAS), same sizes, same machine, one run. Writes a Markdown
# table to docs/results/toy-speed.md (or the file given as $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/toy-speed.md}
threads=${THREADS:-1}

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null || ! ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch libopenblas0-pthread
fi

go_out=$(go test -run '^$' -bench 'BenchmarkTrainStep' -benchtime 300x ./density/)
py_out=$(OMP_NUM_THREADS=$threads /usr/bin/python3 scripts/toy_bench.py --method all --steps 1000 --warmup 50 --threads "$threads" --json)

{
  echo "# Toy training speed: Go (SimpleGo) vs PyTorch (CPU)"
  echo
  echo "Command: \`scripts/bench-toy.sh\` on $(nproc) cores, $(date -u +%Y-%m-%d). PyTorch threads: $threads."
  echo
  echo "| method | Go steps/s | PyTorch steps/s | Go / PyTorch |"
  echo "|---|---|---|---|"
  for m in ed sm cd; do
    g=$(echo "$go_out" | awk -v m="$m" '$1 ~ "BenchmarkTrainStep/"m"(-|$)" {for(i=1;i<=NF;i++) if($(i+1)=="steps/s") print $i}')
    p=$(echo "$py_out" | /usr/bin/python3 -c "import sys,json
for l in sys.stdin:
    d=json.loads(l)
    if d['method']=='$m': print('%.1f'%d['steps_per_sec'])")
    r=$(/usr/bin/python3 -c "print('%.2f'%($g/$p))")
    echo "| $m | $g | $p | $r |"
  done
  echo
  echo "PyTorch: $(echo "$py_out" | head -1 | /usr/bin/python3 -c "import sys,json; d=json.loads(sys.stdin.read()); print('torch', d['torch'], 'BLAS', d.get('blas'))")"
  echo
  echo '```'
  echo "$go_out"
  echo "$py_out"
  echo '```'
} > "$out"
cat "$out"
