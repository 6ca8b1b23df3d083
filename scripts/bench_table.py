#!/usr/bin/env python3
"""The side-by-side speed table of scripts/bench-cpu.sh and bench-toy.sh.

Reads the raw rows those scripts collect (tab-separated: round, impl, shape,
batch, method, s_per_iter, compile_s; one row per process and round) and
writes a Markdown table: per shape, batch and method, the median over rounds
(min … max) of each implementation's time per step (the implementations
present in RAW), the speed of Go on XLA CPU relative to PyTorch eager and
to the fastest peer, its time relative to JAX, and compile times. With
--flops and --peak (bench-cpu.sh), also the fraction of the machine's
measured peak that Go on XLA CPU reaches: the step's FLOPs (bench-lebm
-flops-only) over its time, over the larger of the PyTorch and XLA matrix
products' median GFLOP/s (scripts/peak_matmul.py).

  bench_table.py RAW OUT --title TITLE --note NOTE [--unit s|ms] [--flops F.tsv --peak P.tsv]
"""

import argparse
import csv
import statistics

IMPLS = ["go-xla", "go-simplego", "pytorch", "pytorch-compile", "jax", "jax-fori"]
HEADERS = ["Go XLA CPU", "Go SimpleGo", "PyTorch", "PyTorch torch.compile", "JAX XLA CPU", "JAX fori_loop"]
PEERS = ["pytorch", "pytorch-compile", "jax", "jax-fori"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--title", required=True)
    ap.add_argument("--note", required=True, help="the paragraph under the title: command, machine, date")
    ap.add_argument("--unit", choices=["s", "ms"], default="s", help="unit of the time cells")
    ap.add_argument("--flops", help="tab-separated shape, batch, method, gflop")
    ap.add_argument("--peak", help="tab-separated round, lib, gflops (scripts/peak_matmul.py)")
    args = ap.parse_args()
    flops, peak = {}, None
    if args.flops and args.peak:
        for r in csv.DictReader(open(args.flops), delimiter="\t"):
            flops[(r["shape"], r["batch"], r["method"])] = float(r["gflop"])
        by_lib = {}
        for r in csv.DictReader(open(args.peak), delimiter="\t"):
            by_lib.setdefault(r["lib"], []).append(float(r["gflops"]))
        peak = max(statistics.median(v) for v in by_lib.values())

    rows = list(csv.DictReader(open(args.raw), delimiter="\t"))
    scale, digits = (1000.0, 2) if args.unit == "ms" else (1.0, 3)
    cells = {}
    for r in rows:
        cells.setdefault((r["shape"], r["batch"], r["method"], r["impl"]), []).append(r)

    def times(key):
        return [float(r["s_per_iter"]) * scale for r in cells.get(key, [])]

    def compiles(key):
        return [float(r["compile_s"]) for r in cells.get(key, []) if r["compile_s"]]

    def fmt(xs):
        if not xs:
            return "–"
        return f"{statistics.median(xs):.{digits}f} ({min(xs):.{digits}f} … {max(xs):.{digits}f})"

    def ratio(num, den, suffix=""):
        return f"{statistics.median(num) / statistics.median(den):.2f}{suffix}" if num and den else "–"

    def med1(xs):
        return f"{statistics.median(xs):.1f}" if xs else "–"

    unit = "ms" if args.unit == "ms" else "s"
    present = [i for i in IMPLS if any(r["impl"] == i for r in rows)]
    headers = [HEADERS[IMPLS.index(i)] for i in present]
    extra = ["Go XLA ÷ PyTorch speed", "Go XLA ÷ fastest peer speed", "Go XLA time ÷ JAX", "compile Go XLA / JAX s"]
    if peak:
        extra.insert(0, f"Go XLA % of peak ({peak:.0f} GFLOP/s)")
    lines = [f"# {args.title}\n", args.note + "\n",
             "| shape (batch) | method | " + " | ".join(f"{h} {unit}" for h in headers) + " | " + " | ".join(extra) + " |",
             "|---|---|" + "---|" * (len(headers) + len(extra))]
    for shape, batch in dict.fromkeys((r["shape"], r["batch"]) for r in rows):
        methods = dict.fromkeys(r["method"] for r in rows if r["shape"] == shape and r["batch"] == batch)
        for method in methods:
            t = {i: times((shape, batch, method, i)) for i in IMPLS}
            c = {i: compiles((shape, batch, method, i)) for i in IMPLS}
            peers = [t[i] for i in PEERS if t[i]]
            fastest = min(peers, key=statistics.median) if peers else []
            row = [fmt(t[i]) for i in present]
            tail = [ratio(t["pytorch"], t["go-xla"], "×"), ratio(fastest, t["go-xla"], "×"), ratio(t["go-xla"], t["jax"]),
                    f"{med1(c['go-xla'])} / {med1(c['jax'])}"]
            if peak:
                g = flops.get((shape, batch, method))
                tail.insert(0, f"{100 * g / (statistics.median(t['go-xla']) / scale) / peak:.0f} %" if g and t["go-xla"] else "–")
            lines.append(f"| {shape} ({batch}) | {method} | " + " | ".join(row + tail) + " |")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
