#!/bin/bash
# Dedicated aggregators against what their traffic alone costs on the same emulated links (root;
# tools/cluster). For each node count, alternated ROUNDS times: the library (one worker and one
# dedicated aggregator per node, node multicast on, aggregator forced, identical 1% patterns, so
# every worker sends the same non-zero data at every N; MPI_Allreduce not run: --no-mpi), then
# bench/exchange_bound moving the same bytes between the same ranks with plain MPI messages.
# OmniReduce's "time independent of the workers" holds for the library when ours/exchange stays flat.
# QUEUE: the links' queue (cluster.sh --queue; 100ms drops, 5s is lossless). MIB: the vector.
# Usage: [MIB=32] [QUEUE=100ms] [ROUNDS=2] bench/scripts/cluster_dedicated_bound.sh [node counts, default "2 3 4 6 8"]
#        (raw output appended to docs/results/scale/dedicated_bound_10mbit_${MIB}MiB_${QUEUE}.txt; the
#        table from it: python3 bench/scripts/dedicated_bound_table.py FILE)
set -euo pipefail
NODES=${*:-2 3 4 6 8}
MIB=${MIB:-32}
QUEUE=${QUEUE:-100ms}
cd "$(dirname "$0")/../../build"
OUT=../docs/results/scale/dedicated_bound_10mbit_${MIB}MiB_${QUEUE}.txt
BYTES=$((MIB * 1048576))
# The non-zero data a worker sends at 1% of 256-float blocks: 1% of the blocks, plus a 4-byte block
# number per 1 KiB block when packed.
NONZERO=$((BYTES / 100 * 1028 / 1024))
CL=(../tools/cluster/cluster.sh --rate 10mbit --queue "$QUEUE" --ppn 2)
for ((round = 1; round <= ${ROUNDS:-2}; ++round)); do
  for n in $NODES; do
    echo "=== round $round, $n nodes x 2 ranks, 10mbit, queue $QUEUE, ${MIB} MiB, $(date -u +%FT%TZ)" >> "$OUT"
    env MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS="$n" MPIX_SPARSE_ALGORITHM=aggregator \
      MPIX_SPARSE_NODE_MULTICAST=on "${CL[@]}" --nodes "$n" -- --timeout 1800 \
      bench/osu_sparse_allreduce -m "$BYTES:$BYTES" --density 0.01 --pattern identical -i 5 -x 1 --time-limit 0 \
      --no-mpi 2>&1 | grep -vE "^# OSU|^#$" >> "$OUT"
    "${CL[@]}" --nodes "$n" -- --timeout 1800 bench/exchange_bound "$NONZERO" 5 10 >> "$OUT" 2>&1
  done
done
