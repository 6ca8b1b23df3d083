#!/usr/bin/env python3
"""The side-by-side speed table of scripts/bench-cpu.sh and bench-toy.sh.

Reads the raw rows those scripts collect (tab-separated: round, impl, shape,
batch, method, s_per_iter, compile_s; one row per process and round) and
writes a Markdown table: per shape, batch and method, the median over rounds
(min … max) of each implementation's time per step, the speed of Go on XLA
CPU relative to PyTorch and its time relative to JAX, and compile times.

  bench_table.py RAW OUT --title TITLE --note NOTE [--unit s|ms]
"""

import argparse
import csv
import statistics

IMPLS = ["go-xla", "go-simplego", "pytorch", "jax"]
HEADERS = ["Go XLA CPU", "Go SimpleGo", "PyTorch", "JAX XLA CPU"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--title", required=True)
    ap.add_argument("--note", required=True, help="the paragraph under the title: command, machine, date")
    ap.add_argument("--unit", choices=["s", "ms"], default="s", help="unit of the time cells")
    args = ap.parse_args()

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
    lines = [f"# {args.title}\n", args.note + "\n",
             f"| shape (batch) | method | " + " | ".join(f"{h} {unit}" for h in HEADERS) +
             " | Go XLA ÷ PyTorch speed | Go XLA time ÷ JAX | compile Go XLA / JAX s |",
             "|---|---|" + "---|" * len(HEADERS) + "---|---|---|"]
    for shape, batch in dict.fromkeys((r["shape"], r["batch"]) for r in rows):
        methods = dict.fromkeys(r["method"] for r in rows if r["shape"] == shape and r["batch"] == batch)
        for method in methods:
            t = {i: times((shape, batch, method, i)) for i in IMPLS}
            c = {i: compiles((shape, batch, method, i)) for i in IMPLS}
            lines.append(f"| {shape} ({batch}) | {method} | " + " | ".join(fmt(t[i]) for i in IMPLS) +
                         f" | {ratio(t['pytorch'], t['go-xla'], '×')} | {ratio(t['go-xla'], t['jax'])} | "
                         f"{med1(c['go-xla'])} / {med1(c['jax'])} |")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
