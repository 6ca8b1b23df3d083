#!/usr/bin/env bash
# SimpleGo speed of the transposed-convolution implementations:
# BenchmarkConvTranspose2D (nets/bench_test.go; the svhn generator at batch
# 16 and the mnist one at batch 64, forward and forward+backward) in
# interleaved rounds, each round running every implementation once in a
# fresh niced process, so that other work on a shared machine hits each
# alike. Prints Markdown tables of the median wall time and of the median
# CPU time (all threads) per operation over the rounds, with each
# implementation's ratio to the first; the raw rows go to RAW.
#
#   scripts/bench-convt.sh
#
# Environment: ROUNDS (5), IMPLS ("gather shift"), BENCHTIME (3x), RAW
# (bin/bench-convt.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
impls=${IMPLS:-gather shift}
benchtime=${BENCHTIME:-3x}
raw=${RAW:-bin/bench-convt.tsv}

mkdir -p bin "$(dirname "$raw")"
go test -c -o bin/nets.test ./nets
printf 'round\tcase\timpl\tpass\tns_per_op\tcpu_ns_per_op\n' >"$raw"
for round in $(seq "$rounds"); do
	for impl in $impls; do
		# Sub-benchmark names are CASE/IMPL/PASS; the -2 suffix is GOMAXPROCS.
		EDLEBM_TEST_BACKEND=go nice -n 10 bin/nets.test -test.run '^$' \
			-test.bench "ConvTranspose2D/.*/$impl/" -test.benchtime "$benchtime" |
			awk -v r="$round" '/^BenchmarkConvTranspose2D\// {
				split($1, p, "/"); sub(/-[0-9]+$/, "", p[4])
				printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, p[2], p[3], p[4], $3, $5 }' >>"$raw"
	done
done

python3 - "$raw" "$impls" <<'PY'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
impls = sys.argv[2].split()
for col, what in ((4, "wall time"), (5, "CPU time, all threads")):
    times = collections.defaultdict(list)
    for row in rows:
        times[(row[1], row[3], row[2])].append(float(row[col]))
    keys = sorted({(c, p) for c, p, _ in times})
    rounds = len(times[keys[0] + (impls[0],)])
    print(f"\n{what}, ms per operation (median of {rounds} rounds)\n")
    print("| case | pass | " + " | ".join(impls) + " | " +
          " | ".join(f"{i}/{impls[0]}" for i in impls[1:]) + " |")
    print("|---|---|" + "---:|" * (2 * len(impls) - 1))
    for case, pass_ in keys:
        med = [statistics.median(times[(case, pass_, i)]) / 1e6 for i in impls]
        print(f"| {case} | {pass_} | " + " | ".join(f"{m:.0f}" for m in med) + " | " +
              " | ".join(f"{m / med[0]:.2f}" for m in med[1:]) + " |")
PY
