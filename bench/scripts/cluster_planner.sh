#!/bin/bash
# The planner on a network (issue #13): 4 emulated nodes x 1 rank, links shaped to RATE (1gbit,
# 10gbit), 1-64 MiB x 0.1-100%. --forced times the library with each algorithm forced (dense,
# aggregator, allgather) interleaved call by call with auto's choice, so the ratio Auto/Best is taken
# within one run; 1-8 MiB rows (10-60 ms a call) get 12 iterations, larger ones 6 (3 until 2026-12-07:
# too few to tell algorithms 20% apart under calls that vary by 40%) (root; tools/cluster).
# Warm-up: 16 calls per row (WARMUP), enough for auto's tuner (mpix_sparse_tune, on across nodes) to
# try the algorithms it finds close and settle, so the timed calls show its steady choice: three
# candidates take 3 x (1 + 3 samples) calls and one more to choose, and one may become a candidate
# only after another's first samples (12 until 2026-12-07: no slack since three samples a candidate);
# MPIX_SPARSE_TUNE=off shows the cost model's choice alone.
# Table: bench/scripts/planner_table.py OUT_small.json OUT_large.json (several runs' files: cell medians,
# and each cell's calls of all runs compared in pairs, with a bootstrap interval)
# Usage: bench/scripts/cluster_planner.sh RATE [OUT_PREFIX]
set -uo pipefail
cd "$(dirname "$0")/../../build" || exit
rate=${1:-1gbit}
out=${2:-../docs/results/cluster_planner_$rate}
# MPIX_SPARSE_* settings in the environment reach every rank (e.g. MPIX_SPARSE_COST_LINK_NS).
export MPIX_SPARSE_DEBUG=1  # prints the probed link cost
env_args=()
for v in $(env | grep -o '^MPIX_SPARSE_[A-Z_]*' || true); do env_args+=(-x "$v"); done
run() { # sizes iterations warmup suffix
  ../tools/cluster/cluster.sh --nodes 4 --ppn 1 --rate "$rate" -- --timeout 1500 "${env_args[@]}" \
    bench/osu_sparse_allreduce -m "$1" --density 0.001,0.01,0.1,0.5,1 -i "$2" -x "$3" --forced --validate \
    --json "${out}_$4.json" 2>&1 | grep -v "UCX endpoint failed"
}
run 1048576:8388608 12 "${WARMUP:-16}" small
run 16777216:67108864 6 "${WARMUP:-16}" large
