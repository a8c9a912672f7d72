#!/usr/bin/env python3
"""Medians over runs of bench/scripts/cluster_multicast.sh: multicast off against on per shape,
pattern and density. Usage: multicast_table.py docs/results/node_multicast"""
import glob
import re
import statistics
import sys
from collections import defaultdict

root = sys.argv[1] if len(sys.argv) > 1 else "docs/results/node_multicast"
rows = defaultdict(list)  # (mode, shape, pattern, density, mc) -> [(ours_ms, ar_ms, floor_ms)]
for path in sorted(glob.glob(f"{root}/*_run*.txt")):
    mode = "dedicated, 2 aggregators" if "dedicated" in path else "colocated flat"
    key = None
    for line in open(path):
        m = re.match(r"=== (\d+) nodes x (\d+) ranks, (\w+), multicast (\w+)", line)
        if m:
            key = (mode, f"{m[1]} x {m[2]}", m[3], m[4])
            continue
        f = line.split()
        if key and len(f) >= 11 and f[0].isdigit() and f[-1] == "ok":
            rows[(key[0], key[1], key[2], float(f[1]), key[3])].append((float(f[4]) / 1e3, float(f[3]) / 1e3, float(f[5]) / 1e3))

def med(xs):
    return statistics.median(xs)

print("| mode | nodes x ranks | pattern | density | runs | ours off -> on (ms) | on/off | speedup over MPI_Allreduce off -> on | ours/floor off -> on |")
print("|---|---|---|---|---|---|---|---|---|")
seen = sorted({k[:4] for k in rows}, key=lambda k: (k[0], k[1], k[2], k[3]))
for k in seen:
    off, on = rows.get(k + ("off",), []), rows.get(k + ("on",), [])
    if not off or not on:
        continue
    o, n = med([r[0] for r in off]), med([r[0] for r in on])
    so, sn = med([r[1] / r[0] for r in off]), med([r[1] / r[0] for r in on])
    fo, fn = med([r[0] / r[2] for r in off]), med([r[0] / r[2] for r in on])
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {min(len(off), len(on))} | {o:.0f} -> {n:.0f} | {n / o:.2f} | {so:.1f} -> {sn:.1f} | {fo:.2f} -> {fn:.2f} |")
