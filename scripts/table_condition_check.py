#!/usr/bin/env python3
"""Rows drawn given conditions against the training rows that meet them.

    scripts/table_condition_check.py RUN CONDITION... -- ROWS.csv...

RUN is a train-table run folder (its table.json names the data file and
the training rows); each CONDITION is sample-table's -condition, a
category (class=p) or a number's range (age=..30, age=30..40); each
ROWS.csv is synthetic rows in the table's columns (sample-table's, or
train-table's samples.csv, whose rows meeting the conditions are kept).
For each column without a category condition it prints how close the
rows' law is to the training rows' with the conditions: 1 − the total
variation distance for a category, 1 − the Kolmogorov–Smirnov distance
for a number (SDMetrics' column shapes), their mean and the three lowest.
Standard library only.
"""
import bisect
import collections
import csv
import json
import math
import sys

MISSING = {"", "na", "n/a", "nan", "null", "none", "?"}


def read(path):
    return [{k.strip(): (v or "").strip() for k, v in r.items()} for r in csv.DictReader(open(path, newline=""))]


def tv_complement(a, b, column):
    ca, cb = collections.Counter(r[column] for r in a), collections.Counter(r[column] for r in b)
    return 1 - 0.5 * sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in set(ca) | set(cb))


def ks_complement(a, b, column):
    xa, xb = sorted(float(r[column]) for r in a), sorted(float(r[column]) for r in b)
    return 1 - max(abs(bisect.bisect_right(xa, x) / len(xa) - bisect.bisect_right(xb, x) / len(xb)) for x in xa + xb)


def meets(conditions, kinds):
    """A test of a row against every condition."""
    tests = []
    for condition in conditions:
        column, value = condition.split("=", 1)
        if kinds[column] == "numeric":
            lo, hi = (float(v) if v.strip() else default for v, default in zip(value.split(".."), (-math.inf, math.inf)))
            tests.append(lambda r, c=column, lo=lo, hi=hi: lo <= float(r[c]) <= hi)
        else:
            tests.append(lambda r, c=column, v=value: r[c] == v)
    return lambda r: all(test(r) for test in tests)


def main():
    cut = sys.argv.index("--")
    run, conditions, files = sys.argv[1], sys.argv[2:cut], sys.argv[cut + 1:]
    rec = json.load(open(run + "/table.json"))
    kinds = {c["name"]: c["kind"] for c in rec["schema"]["columns"]}
    rows = [r for r in read(rec["file"]) if not any(r[c].lower() in MISSING for c in kinds)]  # the rows train-table read
    if len(rows) != rec["rows"]:
        sys.exit("%s: %d rows without a missing value, the run read %d" % (rec["file"], len(rows), rec["rows"]))
    ok = meets(conditions, kinds)
    fixed = {c.split("=", 1)[0] for c in conditions if kinds[c.split("=", 1)[0]] != "numeric"}
    reference = [rows[i] for i in rec["train_rows"] if ok(rows[i])]
    label = " and ".join(conditions)
    print("training rows with %s: %d of %d" % (label, len(reference), len(rec["train_rows"])))
    for path in files:
        drawn = [r for r in read(path) if ok(r)]
        scores = {c: (ks_complement if k == "numeric" else tv_complement)(drawn, reference, c) for c, k in kinds.items() if c not in fixed}
        lowest = ", ".join("%s %.3f" % kv for kv in sorted(scores.items(), key=lambda kv: kv[1])[:3])
        print("%s: %d rows with %s; mean %.3f; lowest %s" % (path, len(drawn), label, sum(scores.values()) / len(scores), lowest))


if __name__ == "__main__":
    main()
