#!/bin/bash
# The sweep's two dense rows far below 1 (issue #13: 512 KiB clustered 100% on 4 ranks at 0.18, 128 KiB
# disjoint 100% on 2 ranks at 0.32): the sweep's own commands (bench/scripts/local_sweeps.sh) up to
# 1 MiB, so every row before them runs as it did, RUNS times each; prints those rows and the slowest
# dense row of every run.
# Usage: bench/scripts/dense_rows_recheck.sh [RUNS] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
out=${2:-out/dense_rows_recheck}
mkdir -p "$out"
for ((i = 1; i <= runs; ++i)); do
  for spec in "4 clustered" "2 disjoint"; do
    set -- $spec
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$1" build/bench/osu_sparse_allreduce \
      -m 4096:1048576 --density 0.001,0.01,0.1,0.5,1 --pattern "$2" -i 20 --validate \
      --json "$out/$2_$1ranks_run$i.json" > "$out/$2_$1ranks_run$i.txt"
  done
done
python3 - "$out" "$runs" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
for name, size in (("clustered_4ranks", 524288), ("disjoint_2ranks", 131072)):
    for i in range(1, runs + 1):
        rows = json.load(open(f"{out}/{name}_run{i}.json"))["rows"]
        row = next(r for r in rows if r["size"] == size and r["density"] == 1)
        dense = [r for r in rows if r["algorithm_name"] == "dense" and r["size"] > 65536]
        worst = min(dense, key=lambda r: r["speedup"])
        print(f"{name} run {i}: {size // 1024} KiB 100%: {row['speedup']:.2f} ({row['algorithm_name']}); "
              f"slowest dense row above 64 KiB: {worst['speedup']:.2f} at {worst['size'] // 1024} KiB "
              f"{worst['density'] * 100:g}% ; valid {all(r['valid'] for r in rows)}")
PY
