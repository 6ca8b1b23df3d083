#!/usr/bin/python3
"""The density table of docs/own-data.md from train-vectors run folders:
for each data set (a run folder's name without its -sSEED) and method,
the mean held-out log-likelihood per row over the seeds with the lowest
and highest seed's, marked where AIS did not judge every seed converged;
then the AIS evidence of every run (log Z at the reported and at half the
temperatures, the reverse run's upper estimate, the bracket, the
effective chains, the warnings). The Gaussian baseline's CSV
(scripts/vectors-gaussian.py's output) adds its column.

    /usr/bin/python3 scripts/vectors-table.py --gaussian gaussian.csv RUN [RUN ...]
"""
import argparse
import collections
import json
import os
import re

METHODS = ["ed", "dsm", "cd", "sm"]


def results(runs):
    """{(data, method): [(seed, results.json), ...]} over the run folders."""
    table = collections.defaultdict(list)
    for run in runs:
        run = run.rstrip("/")
        m = re.fullmatch(r"(.*)-s(\d+)", os.path.basename(run))
        if not m:
            raise SystemExit(f"{run}: want a folder named DATA-sSEED")
        for method in METHODS:
            path = os.path.join(run, method, "results.json")
            if os.path.exists(path):
                with open(path) as f:
                    table[(m.group(1), method)].append((int(m.group(2)), json.load(f)))
    return table


def gaussian(path):
    """{data: {seed: log-likelihood}} from vectors-gaussian.py's CSV."""
    out = collections.defaultdict(dict)
    if path:
        with open(path) as f:
            for line in f:
                run, _, value = line.strip().split(",")
                m = re.fullmatch(r"(.*)-s(\d+)", os.path.basename(run.rstrip("/")))
                out[m.group(1)][int(m.group(2))] = float(value)
    return out


def cell(values, mark=""):
    mean = sum(values) / len(values)
    return f"{mean:,.2f}{mark} ({min(values):,.2f} … {max(values):,.2f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gaussian", help="vectors-gaussian.py's output")
    p.add_argument("runs", nargs="+")
    a = p.parse_args()
    table, base = results(a.runs), gaussian(a.gaussian)
    sets = sorted({d for d, _ in table})
    print("| data | " + " | ".join(m.upper() for m in METHODS) + " | Gaussian |")
    print("|---" * (len(METHODS) + 2) + "|")
    for d in sets:
        row = [d]
        for m in METHODS:
            runs = table.get((d, m))
            if not runs:
                row.append("not run")
                continue
            mark = ""
            if any("ais" not in r for _, r in runs):
                mark = "‡"
            elif not all(r["ais"]["converged"] for _, r in runs):
                mark = "†"
            row.append(cell([r["test_loglik"] for _, r in runs], mark))
        row.append(cell(list(base[d].values())) if base.get(d) else "")
        print("| " + " | ".join(row) + " |")
    print("\n† AIS did not judge every seed converged (below). ‡ Measured by an AIS without checks (train-vectors before 2026-12-04).\n")
    print("ED against each, paired over the seeds (ED minus the other, nats a row):\n")
    print("| data | against | mean | lowest … highest seed | ED ahead in |")
    print("|---|---|---|---|---|")
    for d in sets:
        ed = {seed: r["test_loglik"] for seed, r in table.get((d, "ed"), [])}
        others = [(m.upper(), {seed: r["test_loglik"] for seed, r in table.get((d, m), [])}) for m in METHODS[1:]]
        others.append(("Gaussian", base.get(d, {})))
        for name, other in others:
            diffs = [ed[seed] - other[seed] for seed in sorted(ed) if seed in other]
            if diffs:
                print(f"| {d} | {name} | {sum(diffs) / len(diffs):+,.2f} | {min(diffs):+,.2f} … {max(diffs):+,.2f} | "
                      f"{sum(x > 0 for x in diffs)} of {len(diffs)} seeds |")
    print()
    print("| data | method | seed | log Z | at half the temperatures | reverse (upper) | bracket | effective chains | converged |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in sets:
        for m in METHODS:
            for seed, r in sorted(table.get((d, m), [])):
                ais = r.get("ais")
                if ais is None:
                    continue
                print(f"| {d} | {m} | {seed} | {ais['log_z']:,.3f} [{ais['interval']['lo']:,.3f}, {ais['interval']['hi']:,.3f}] | "
                      f"{ais['check']['log_z']:,.3f} | {ais['upper']['log_z']:,.3f} | {ais['bracket']:,.3f} | "
                      f"{ais['effective_chains']:.0f}{' of ' + str(ais['chains']) if 'chains' in ais else ''} | {'yes' if ais['converged'] else 'no'} |")


if __name__ == "__main__":
    main()
