#!/usr/bin/env python3
"""Sums what the cross-device collectives of an XLA HLO module move.

Reads an HLO text dump (XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text,
the *.cpu_after_optimizations.txt or *.gpu_after_optimizations.txt file of
a training step) and prints, per collective kind, how many there are and
the bytes of their results: for an all-reduce, the buffer each device
contributes and receives.

    python3 scripts/allreduce_bytes.py DIR/module_0015.Trainer_0.cpu_after_optimizations.txt
"""
import re
import sys

SIZES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
         "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8}
KINDS = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")
ARRAY = re.compile(r"\b(" + "|".join(SIZES) + r")\[([0-9,]*)\]")


def result_bytes(result):
    total = 0
    for dtype, dims in ARRAY.findall(result):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * SIZES[dtype]
    return total


def main(path):
    counts, sizes = {}, {}
    with open(path) as f:
        for line in f:
            for kind in KINDS:
                # "%name = RESULT_SHAPE kind(operands), ..." ; -start/-done
                # pairs of async collectives count once, at the start.
                m = re.search(r"= (.*?) " + kind + r"(-start)?\(", line)
                if m:
                    counts[kind] = counts.get(kind, 0) + 1
                    sizes[kind] = sizes.get(kind, 0) + result_bytes(m.group(1))
    if not counts:
        print("no collectives")
    for kind in KINDS:
        if kind in counts:
            print(f"{kind}: {counts[kind]} op(s), {sizes[kind]} bytes ({sizes[kind] / 1e6:.3f} MB)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
