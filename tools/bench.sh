#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the OSU-style comparison of
# MPIX_Sparse_allreduce against MPI_Allreduce on 4 local ranks (64 MiB of floats at 1%, 10%, 50% and
# 100% block density, validated), then plots the speedup. Then the same comparison with --keep-heap:
# malloc keeps freed large blocks, so Open MPI's MPI_Allreduce does not fault in a fresh temporary
# buffer every call (see bench/process_heap.h); both baselines are real, the README explains which is
# which. Results go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
mkdir -p out
# main_job NAME [OPTION...]: the 4-rank comparison, to out/NAME.txt and out/NAME.json.
main_job() {
  local name=$1
  shift
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 \
    build/bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 20 -x 3 \
    --validate "$@" --json "out/$name.json" | tee "out/$name.txt"
}
main_job bench
python3 bench/plot_speedup.py -o out/speedup.png out/bench.json && echo "plot: out/speedup.png"
echo
main_job bench_kept_heap --keep-heap
