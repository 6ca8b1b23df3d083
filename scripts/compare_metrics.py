#!/usr/bin/env python3
"""Compares two train-lebm runs step by step from their metrics.jsonl files.

    scripts/compare_metrics.py RUN_A RUN_B [--window 20]

RUN_A and RUN_B are run folders (or metrics.jsonl files) of the same
configuration and seed that differ in one setting (the backend's precision,
say). Prints Markdown: the first step where each training metric differs by
more than 1 % and by more than 10 % (the runs share their random streams,
so they start identical and drift apart), each metric's mean over the last
--window steps in both runs, and the test reconstruction MSE after each epoch.
"""
import argparse
import json
import os
import signal
import sys

METRICS = ["generator_loss", "prior_loss", "posterior_energy", "reconstruction_mse"]


def read(path):
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    try:
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"compare_metrics: {path}: {e}")
    if not rows:
        sys.exit(f"compare_metrics: {path}: no metrics")
    return path, {r["step"]: r for r in rows}


def first_step_apart(a, b, steps, metric, rel):
    for s in steps:
        x, y = a[s][metric], b[s][metric]
        if abs(x - y) > rel * max(abs(x), abs(y), 1e-12):
            return s
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--window", type=int, default=20, help="steps averaged at the end (default 20)")
    args = p.parse_args()
    name_a, a = read(args.run_a)
    name_b, b = read(args.run_b)
    steps = sorted(set(a) & set(b))
    if not steps:
        sys.exit("compare_metrics: the runs share no steps")
    last = steps[-args.window:]
    label_a, label_b = (os.path.basename(os.path.dirname(n)) or n for n in (name_a, name_b))

    print(f"{len(steps)} common steps; A = {name_a}, B = {name_b}\n")
    print(f"| metric | first step > 1 % apart | first step > 10 % apart | mean of last {len(last)}: {label_a} | {label_b} |")
    print("|---|---|---|---|---|")
    for m in METRICS:
        mean = lambda run: sum(run[s][m] for s in last) / len(last)
        apart = [first_step_apart(a, b, steps, m, r) for r in (0.01, 0.1)]
        cells = ["never" if s is None else str(s) for s in apart]
        print(f"| {m} | {cells[0]} | {cells[1]} | {mean(a):.4g} | {mean(b):.4g} |")

    tests = [s for s in steps if "test_reconstruction_mse" in a[s] and "test_reconstruction_mse" in b[s]]
    if tests:
        print(f"\n| step | test reconstruction MSE: {label_a} | {label_b} |")
        print("|---|---|---|")
        for s in tests:
            print(f"| {s} | {a[s]['test_reconstruction_mse']:.4f} | {b[s]['test_reconstruction_mse']:.4f} |")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    main()
