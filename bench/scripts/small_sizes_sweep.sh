#!/bin/bash
# "Never slower than MPI_Allreduce" below the sizes where sparsity pays (issue #13): the sweep's
# sizes 4 KiB - 4 MiB x densities 0.1-100% x patterns random/clustered on 4 and 2 ranks, RUNS times;
# prints, per row, the median over runs of MPI_Allreduce time / ours (the Speedup column) and lists
# the rows whose median is below 1, with the range over runs.
# Usage: bench/scripts/small_sizes_sweep.sh [RUNS] [OUT_DIR] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
out=${2:-out/small_sizes_sweep}
iters=${3:-200}
mkdir -p "$out"
for ((i = 1; i <= runs; ++i)); do
  for ranks in 4 2; do
    for pattern in random clustered; do
      mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" build/bench/osu_sparse_allreduce \
        -m 4096:4194304 --density 0.001,0.01,0.1,0.5,1 --pattern "$pattern" -i "$iters" -x 10 --validate \
        --json "$out/${pattern}_${ranks}ranks_run$i.json" > "$out/${pattern}_${ranks}ranks_run$i.txt"
    done
  done
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rows = {}
for ranks in (4, 2):
    for pattern in ("random", "clustered"):
        for i in range(1, runs + 1):
            data = json.load(open(f"{out}/{pattern}_{ranks}ranks_run{i}.json"))
            for r in data["rows"]:
                assert r["valid"], (pattern, ranks, i, r["size"], r["density"])
                rows.setdefault((ranks, pattern, r["size"], r["density"]), []).append((r["speedup"], r["algorithm_name"]))
medians = {k: statistics.median(s for s, _ in v) for k, v in rows.items()}
slow = sorted((m, k) for k, m in medians.items() if m < 1.0)
print(f"{len(medians)} rows, median over {runs} runs; all results valid")
print(f"rows with median below 1: {len(slow)}; below 0.95: {sum(1 for m, _ in slow if m < 0.95)}; "
      f"below 0.9: {sum(1 for m, _ in slow if m < 0.9)}")
for m, (ranks, pattern, size, density) in slow:
    v = rows[(ranks, pattern, size, density)]
    algos = "/".join(sorted({a for _, a in v}))
    print(f"  {ranks} ranks {pattern:9s} {size // 1024:5d} KiB {density * 100:5g}%: median {m:.2f} "
          f"(runs {min(s for s, _ in v):.2f}-{max(s for s, _ in v):.2f}, {algos})")
PY
