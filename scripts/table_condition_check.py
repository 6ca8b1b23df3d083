#!/usr/bin/env python3
"""Rows drawn given a condition against the training rows that meet it.

    scripts/table_condition_check.py RUN COLUMN=CATEGORY ROWS.csv...

RUN is a train-table run folder (its table.json names the data file and
the training rows); each ROWS.csv is synthetic rows in the table's columns
(sample-table's, or train-table's samples.csv, whose rows meeting the
condition are kept). For each other column it prints how close the rows'
law is to the training rows' with the condition: 1 − the total variation
distance for a category, 1 − the Kolmogorov–Smirnov distance for a number
(SDMetrics' column shapes), their mean and the three lowest. Standard
library only.
"""
import bisect
import collections
import csv
import json
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


def main():
    run, condition, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    column, category = condition.split("=", 1)
    rec = json.load(open(run + "/table.json"))
    kinds = {c["name"]: c["kind"] for c in rec["schema"]["columns"]}
    rows = [r for r in read(rec["file"]) if not any(r[c].lower() in MISSING for c in kinds)]  # the rows train-table read
    if len(rows) != rec["rows"]:
        sys.exit("%s: %d rows without a missing value, the run read %d" % (rec["file"], len(rows), rec["rows"]))
    reference = [rows[i] for i in rec["train_rows"] if rows[i][column] == category]
    print("training rows with %s: %d of %d" % (condition, len(reference), len(rec["train_rows"])))
    for path in files:
        drawn = [r for r in read(path) if r[column] == category]
        scores = {c: (ks_complement if k == "numeric" else tv_complement)(drawn, reference, c) for c, k in kinds.items() if c != column}
        lowest = ", ".join("%s %.3f" % kv for kv in sorted(scores.items(), key=lambda kv: kv[1])[:3])
        print("%s: %d rows with %s; mean %.3f; lowest %s" % (path, len(drawn), condition, sum(scores.values()) / len(scores), lowest))


if __name__ == "__main__":
    main()
