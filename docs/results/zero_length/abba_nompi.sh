#!/usr/bin/env bash
# ABBA alternation of two builds, library only (--no-mpi), 64 MiB at 1/10/50/100%, 4 ranks.
# Usage: A=BEFORE_BUILD_DIR B=AFTER_BUILD_DIR abba_nompi.sh [ROUNDS]
set -euo pipefail
R=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4)
A=${A:?before build dir} B=${B:?after build dir}
for ((round = 1; round <= ${1:-5}; ++round)); do
  for d in "$A" "$B" "$B" "$A"; do
    echo "## round $round $d $(date -u +%T)"
    "${R[@]}" "$d/bench/osu_sparse_allreduce" -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 20 -x 3 --no-mpi |
      grep '^67108864'
  done
done
