#!/usr/bin/env python3
"""Medians over repeated runs of osu_sparse_iallreduce (a file of several runs' output): one markdown
table for the overlap rows, one per bucketed block (in the order the blocks first appear)."""
import statistics
import sys
from collections import defaultdict


def main(path):
    overlap = defaultdict(list)  # (size, density, method) -> [(overall, pure, overlap)]
    bucketed = defaultdict(list)  # (header, density) -> [(compute, blocking, mpi, ours)]
    header = None
    for line in open(path):
        if line.startswith("# Bucketed"):
            header = line[2:].split(";")[0].strip()
            continue
        if line.startswith("# Thread level") or "Thread level" in line:
            thread = "multiple" in line
            continue
        f = line.split()
        if not f or line.startswith(("#", "$")):
            continue
        if len(f) >= 7 and f[2].startswith(("MPI_", "MPIX_")):
            overlap[(int(f[0]), float(f[1]), f[2])].append((float(f[3]), float(f[5]), float(f[6])))
        elif header and len(f) >= 6:
            bucketed[(header + (" (progress thread)" if thread else " (test calls)"), float(f[0]))].append(
                tuple(float(x) for x in f[1:5]))
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    print("| Size | Density | MPI_Iallreduce overall / pure (us) | overlap | ours overall / pure (us) | overlap | MPI/ours overall |")
    print("|---|---|---|---|---|---|---|")
    for (size, density) in sorted({(k[0], k[1]) for k in overlap}):
        m = overlap[(size, density, "MPI_Iallreduce")]
        o = overlap[(size, density, "MPIX_Sparse_iallreduce")]
        print(f"| {size >> 20} MiB | {density:g} | {med(m, 0):.0f} / {med(m, 1):.0f} | {med(m, 2):.0f}% | "
              f"{med(o, 0):.0f} / {med(o, 1):.0f} | {med(o, 2):.0f}% | {med(m, 0) / med(o, 0):.2f} |")
    for h in dict.fromkeys(k[0] for k in bucketed):
        print(f"\n{h}, medians of {len(next(v for k, v in bucketed.items() if k[0] == h))} runs (us):\n")
        print("| Density | compute only | ours blocking | MPI_Iallreduce | ours non-blocking | blocking / non-blocking | MPI_Iallreduce / ours |")
        print("|---|---|---|---|---|---|---|")
        for (hh, d), v in sorted(bucketed.items(), key=lambda kv: kv[0][1]):
            if hh != h:
                continue
            c, b, m, o = (med(v, i) for i in range(4))
            print(f"| {d:g} | {c:.0f} | {b:.0f} | {m:.0f} | {o:.0f} | {b / o:.2f} | {m / o:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
