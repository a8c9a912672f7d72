#!/usr/bin/env bash
# Alternates two builds of osu_sparse_allreduce three times, NP ranks (default 4), for a before/after
# comparison within one run of the machine. Without bench arguments: 64 MiB at 1/10/50/100%, then
# 4 KiB - 1 MiB at 1/100%; with them, one run of those arguments per build and round.
# Usage: bench/scripts/before_after.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [BENCH_ARGS...] > results.txt
set -euo pipefail
before=$1 after=$2
shift 2
R=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${NP:-4}")
bench() { # build_dir filter args...
  local d=$1 filter=$2
  shift 2
  echo "\$ ${R[*]} $d/bench/osu_sparse_allreduce $*"
  "${R[@]}" "$d/bench/osu_sparse_allreduce" "$@" | grep -v "$filter"
}
for run in 1 2 3; do
  for v in before after; do
    d=$before
    [[ $v == after ]] && d=$after
    echo "## run $run, $v ($d), $(date -u +%FT%TZ)"
    if (($# > 0)); then
      bench "$d" "^# OSU" "$@"
    else
      bench "$d" "^# OSU" -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 10 -x 2 --validate
      bench "$d" "^# OSU\|^# Ranks\|^# Size" -m 4096:1048576 --density 0.01,1 -i 100 -x 10 --validate
    fi
  done
done
