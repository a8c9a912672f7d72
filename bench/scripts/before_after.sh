#!/usr/bin/env bash
# Alternates two builds of osu_sparse_allreduce three times (64 MiB at 1/10/50/100%, then 4 KiB - 1 MiB
# at 1/100%), 4 ranks, for a before/after comparison within one run of the machine.
# Usage: bench/scripts/before_after.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR > results.txt
set -euo pipefail
before=$1 after=$2
R=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4)
for run in 1 2 3; do
  for v in before after; do
    d=$before
    [[ $v == after ]] && d=$after
    echo "## run $run, $v ($d), $(date -u +%FT%TZ)"
    echo "\$ ${R[*]} $d/bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 10 -x 2 --validate"
    "${R[@]}" "$d/bench/osu_sparse_allreduce" -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 10 -x 2 --validate | grep -v "^# OSU"
    echo "\$ ${R[*]} $d/bench/osu_sparse_allreduce -m 4096:1048576 --density 0.01,1 -i 100 -x 10 --validate"
    "${R[@]}" "$d/bench/osu_sparse_allreduce" -m 4096:1048576 --density 0.01,1 -i 100 -x 10 --validate | grep -v "^# OSU\|^# Ranks\|^# Size"
  done
done
