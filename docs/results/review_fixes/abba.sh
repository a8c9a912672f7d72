#!/usr/bin/env bash
# ABBA alternation of two builds, 10% and 1% at 64 MiB, 4 ranks.
R=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4)
A=/tmp/before/build B=/work/main/build
for round in 1 2 3; do
  for d in $A $B $B $A; do
    echo "## round $round $d $(date -u +%T)"
    "${R[@]}" $d/bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,0.1 -i 20 -x 3 --validate --profile | grep '^67108864'
  done
done
