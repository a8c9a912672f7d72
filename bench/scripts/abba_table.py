#!/usr/bin/env python3
"""Medians of an ABBA run (bench/scripts/abba.sh): per size and density, each build's median time and the
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
        runs[-1]["rows"][(int(f[0]), float(f[1]))] = float(f[column]) / 1000
cells = sorted({c for r in runs for c in r["rows"]})
print("bytes density | before, ms: median (range) | after, ms: median (range) | after/before per round | median")
for d in cells:
    a = [r["rows"][d] for r in runs if r["before"]]
    b = [r["rows"][d] for r in runs if not r["before"]]
    ratios = []
    for i in range(0, len(runs) - 3, 4):
        g = runs[i:i + 4]
        ratios.append(sum(r["rows"][d] for r in g if not r["before"]) / sum(r["rows"][d] for r in g if r["before"]))
    print(f"{d[0]} {d[1]:g} | {statistics.median(a):.3g} ({min(a):.3g}-{max(a):.3g}) | {statistics.median(b):.3g} "
          f"({min(b):.3g}-{max(b):.3g}) | {' '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.3f}")
