#!/usr/bin/env python3
"""Medians of an ABBA run (bench/scripts/abba.sh): per density, each build's median time and the
after/before ratio of each round (the sum of its two after runs over its two before runs).
Usage: abba_table.py RESULTS BEFORE_DIR [TIME_COLUMN]  (TIME_COLUMN: 0-based field of the time in us;
4 = Sparse(us) of --no-mpi rows, 5 = Sparse(us) of --variant elements rows)"""
import statistics
import sys

path, before = sys.argv[1], sys.argv[2]
column = int(sys.argv[3]) if len(sys.argv) > 3 else 4
runs = []
for line in open(path):
    if line.startswith("## round"):
        runs.append({"before": line.split()[3] == before, "rows": {}})
    elif line.strip() and not line.startswith("#") and runs:
        f = line.split()
        runs[-1]["rows"][f[1]] = float(f[column]) / 1000
densities = sorted({d for r in runs for d in r["rows"]}, key=float)
print("density | before, ms: median (range) | after, ms: median (range) | after/before per round | median")
for d in densities:
    a = [r["rows"][d] for r in runs if r["before"]]
    b = [r["rows"][d] for r in runs if not r["before"]]
    ratios = []
    for i in range(0, len(runs) - 3, 4):
        g = runs[i:i + 4]
        ratios.append(sum(r["rows"][d] for r in g if not r["before"]) / sum(r["rows"][d] for r in g if r["before"]))
    print(f"{d} | {statistics.median(a):.1f} ({min(a):.1f}-{max(a):.1f}) | {statistics.median(b):.1f} "
          f"({min(b):.1f}-{max(b):.1f}) | {' '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.3f}")
