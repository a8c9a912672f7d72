#!/usr/bin/env python3
"""Turn osu_sparse_allreduce --json files into markdown tables for docs/performance.md.

    python3 bench/sweep_table.py docs/results/sweep_4ranks_random.json [...]

Per file: a size x density table of the speedup over MPI_Allreduce (both measured interleaved in the
same run), with the algorithm the library chose (a = aggregator, g = allgather, d = dense).
"""
import json
import sys

ALG = {"aggregator": "a", "allgather": "g", "dense": "d", "mixed": "m"}


def size_label(b):
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= factor and b % factor == 0:
            return f"{b // factor} {unit}"
    return f"{b} B"


def main(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        rows = doc["rows"]
        key_speed = next(k for k in ("speedup", "speedup_ar", "speedup_vs_mpi_allreduce") if k in rows[0])
        sizes = sorted({r["size"] for r in rows})
        dens = sorted({r["density"] for r in rows})
        table = {(r["size"], r["density"]): r for r in rows}
        print(f"`{doc['command_line']}` ({doc['ranks']} ranks, {doc['date']})\n")
        print("| size | " + " | ".join(f"{d:g}" for d in dens) + " |")
        print("|---|" + "---|" * len(dens))
        for s in sizes:
            cells = []
            for d in dens:
                r = table.get((s, d))
                if r is None:
                    cells.append("")
                    continue
                alg = ALG.get(r.get("algorithm_name", ""), "?")
                cells.append(f"{r[key_speed]:.2f} {alg}")
            print(f"| {size_label(s)} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
