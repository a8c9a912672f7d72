#!/usr/bin/env bash
# ABBA alternation of two builds of osu_sparse_allreduce (before, after, after, before), ROUNDS times,
# 4 ranks (NP), with the given bench arguments; prints each run's data rows under a "## round" line.
# Balances slow periods and the order of runs, which this machine's 10-30% drift needs.
# Usage: A=BEFORE_BUILD_DIR B=AFTER_BUILD_DIR bench/scripts/abba.sh ROUNDS BENCH_ARGS... > results.txt
set -euo pipefail
R=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${NP:-4}")
A=${A:?before build dir} B=${B:?after build dir}
rounds=$1
shift
for ((round = 1; round <= rounds; ++round)); do
  for d in "$A" "$B" "$B" "$A"; do
    echo "## round $round $d $(date -u +%T)"
    "${R[@]}" "$d/bench/osu_sparse_allreduce" "$@" | grep -v '^#'
  done
done
