#!/usr/bin/env python3
"""Runs a train-lebm command and asks, when its steps slow down, whether
its own threads were the cause: samples every thread's CPU time
(/proc/PID/task/*/stat) and the steps done (lines of OUT/metrics.jsonl)
each interval, then compares the intervals at the run's usual step rate
with the slow ones (below 0.8 of the median rate): the cores' share each
thread name had, and the steps per second.

    scripts/thread_busy.py [--interval 2] OUT -- train-lebm -out OUT [flags]

XLA CPU's compute threads are named tf_XLAEigen; Go's and the compiler's
carry the program's name. Only intervals after the first step and before
the last are counted (compilation and the end's pictures are not steps);
with more than one epoch, the epochs' pictures count as slow intervals.
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import time


def thread_ticks(pid):
    """Thread id → (name, user+system clock ticks) for every thread of pid."""
    ticks = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return ticks
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        ticks[tid] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def steps_done(metrics):
    try:
        with open(metrics) as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def sample(proc, metrics, interval):
    """Per interval: (steps done at its end, seconds, {thread name: cores})."""
    hz = os.sysconf("SC_CLK_TCK")
    rows, before, t0 = [], thread_ticks(proc.pid), time.monotonic()
    while proc.poll() is None:
        time.sleep(interval)
        now, t1 = thread_ticks(proc.pid), time.monotonic()
        share = collections.Counter()
        for tid, (name, t) in now.items():
            share[name] += (t - before.get(tid, (name, t))[1]) / hz / (t1 - t0)
        rows.append((steps_done(metrics), t1 - t0, share))
        before, t0 = now, t1
    return rows


def summarise(rows):
    """Prints the intervals at the usual rate beside the slow ones."""
    rates, final = [], rows[-1][0] if rows else 0
    for (prev, _, _), (done, seconds, share) in zip(rows, rows[1:]):
        # Not compiling; not the end's pictures, drawn before the last step's line.
        if 1 <= prev < done < final - 1:
            rates.append(((done - prev) / seconds, share))
    if not rates:
        sys.exit("thread_busy: no interval between the first and last step")
    median = statistics.median(r for r, _ in rates)
    groups = {"usual": [x for x in rates if x[0] >= 0.8 * median],
              "slow (< 0.8 × median rate)": [x for x in rates if x[0] < 0.8 * median]}
    names = sorted({n for _, s in rates for n in s})
    print("| intervals | count | steps/s | " + " | ".join(f"{n} (cores)" for n in names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for label, group in groups.items():
        if not group:
            continue
        cells = [f"{statistics.mean(s[n] for _, s in group):.2f}" for n in names]
        print(f"| {label} | {len(group)} | {statistics.mean(r for r, _ in group):.2f} | " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].strip())
    p.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    p.add_argument("out", help="the run's output folder (its -out)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- and the train-lebm command")
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        p.error("no command after --")
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    summarise(sample(proc, os.path.join(a.out, "metrics.jsonl"), a.interval))
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
