#!/usr/bin/env python3
"""Tabulates the training time of train-lebm runs from their metrics.jsonl.

    scripts/step_times.py RUN [RUN ...]

RUN is a run folder or its metrics.jsonl. Prints Markdown: per run, the
steps logged, the median and mean seconds per step (the median resists the
steps slowed by other work on the machine, and the first step's
compilation), and the total training time (the sum of the steps' seconds;
evaluation and pictures not counted).
"""
import json
import os
import statistics
import sys


def read(path):
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    try:
        with open(path) as f:
            seconds = [json.loads(line)["seconds"] for line in f if line.strip()]
    except (OSError, json.JSONDecodeError, KeyError) as e:
        sys.exit(f"step_times: {path}: {e}")
    if not seconds:
        sys.exit(f"step_times: {path}: no steps")
    return seconds


def main(args):
    if not args:
        sys.exit(__doc__)
    print("| run | steps | median s / step | mean s / step | training hours |")
    print("|---|---|---|---|---|")
    for run in args:
        s = read(run)
        name = os.path.basename(os.path.normpath(run if os.path.isdir(run) else os.path.dirname(run)))
        print(f"| {name} | {len(s)} | {statistics.median(s):.3f} | {statistics.fmean(s):.3f} | {sum(s) / 3600:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
