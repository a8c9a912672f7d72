#!/usr/bin/env python3
"""Table of bench/scripts/cluster_dedicated_bound.sh's output: per node count, the median over
rounds of the library's call (ms), of bench/exchange_bound's iteration (ms), their ratio taken
within each round, the link bytes' time, and the shapers' drops.
Usage: dedicated_bound_table.py FILE"""
import re
import statistics
import sys

rows = {}
n = None
ours = None
for line in open(sys.argv[1]):
    m = re.match(r"=== round \d+, (\d+) nodes", line)
    if m:
        n, ours = int(m.group(1)), None
        rows.setdefault(n, {"ours": [], "exchange": [], "ratio": [], "link": None, "drops": []})
        continue
    f = line.split()
    if n is not None and len(f) > 4 and f[0].isdigit() and "aggregator" in f:
        ours = float(f[4]) / 1000  # Sparse(us), after Size, Density, Union, MPI ("-")
        rows[n]["ours"].append(ours)
    m = re.match(r"nodes (\d+)\s+median_ms ([\d.]+).*link_bytes_ms ([\d.]+)", line)
    if m and n is not None:
        ex = float(m.group(2))
        rows[n]["exchange"].append(ex)
        rows[n]["link"] = float(m.group(3))
        if ours is not None:
            rows[n]["ratio"].append(ours / ex)
    m = re.search(r"(\d+) dropped by the shapers", line)
    if m and n is not None:
        rows[n]["drops"].append(m.group(1))

med = lambda v: f"{statistics.median(v):.0f}" if v else "-"
print("| workers (nodes x 2) | " + " | ".join(str(k) for k in sorted(rows)) + " |")
print("|---" * (len(rows) + 1) + "|")
print("| ours, ms | " + " | ".join(med(rows[k]["ours"]) for k in sorted(rows)) + " |")
print("| exchange, ms | " + " | ".join(med(rows[k]["exchange"]) for k in sorted(rows)) + " |")
print("| ours / exchange | " + " | ".join(f"{statistics.median(rows[k]['ratio']):.2f}" if rows[k]["ratio"] else "-"
                                         for k in sorted(rows)) + " |")
print("| link bytes at 10 Mbit/s, ms | " + " | ".join(f"{rows[k]['link']:.0f}" if rows[k]["link"] else "-"
                                                     for k in sorted(rows)) + " |")
print("| dropped packets (ours; exchange) | " + " | ".join("/".join(rows[k]["drops"]) for k in sorted(rows)) + " |")
