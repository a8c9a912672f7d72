#!/usr/bin/env bash
# Alternates two builds of osu_sparse_allreduce three times on the element variant (1-16 MiB of
# floats = 256K-4M elements, 0.1/1/10% per rank; against MPI_Allreduce and the allgather of pairs),
# for a before/after comparison within one run of the machine. NP ranks (default 4).
# Usage: bench/scripts/elements_before_after.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR > results.txt
set -euo pipefail
before=$1 after=$2
R=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${NP:-4}")
A=(--variant elements -m 1048576:16777216 --density 0.001,0.01,0.1 -i 50 -x 5 --validate)
for run in 1 2 3; do
  for v in before after; do
    d=$before
    [[ $v == after ]] && d=$after
    echo "## run $run, $v ($d), $(date -u +%FT%TZ)"
    echo "\$ ${R[*]} $d/bench/osu_sparse_allreduce ${A[*]}"
    "${R[@]}" "$d/bench/osu_sparse_allreduce" "${A[@]}" | grep -v "^# OSU"
  done
done
