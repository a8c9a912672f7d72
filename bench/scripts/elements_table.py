#!/usr/bin/env python3
# Table of bench/scripts/elements_before_after.sh output: per row, the median over runs of the
# speedup against the allgather of pairs and against MPI_Allreduce, before -> after.
# Usage: bench/scripts/elements_table.py results.txt
import sys, re, statistics as st, collections
rows = collections.defaultdict(list)
cur = None
for line in open(sys.argv[1]):
    m = re.match(r"## run (\d+), (\w+)", line)
    if m: cur = m.group(2); continue
    f = line.split()
    if len(f) >= 10 and f[0].isdigit():
        size, dens = int(f[0]), float(f[1])
        rows[(cur, size, dens)].append((float(f[3]), float(f[4]), float(f[5]), float(f[6]), float(f[7]), f[9]))
print("| floats | density | vs allgather of pairs: before -> after | vs MPI_Allreduce: before -> after | algorithm after |")
print("|---|---|---|---|---|")
for (v, size, dens) in sorted(k for k in rows if k[0] == 'before'):
    b = rows[('before', size, dens)]; a = rows[('after', size, dens)]
    med = lambda xs, i: st.median(x[i] for x in xs)
    algs = "/".join(sorted(set(x[5] for x in a)))
    print(f"| {size//4//1024}K | {dens*100:g}% | {med(b,4):.2f} -> **{med(a,4):.2f}** | {med(b,3):.2f} -> {med(a,3):.2f} | {algs} |")
