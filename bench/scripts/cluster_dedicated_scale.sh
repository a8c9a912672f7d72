#!/bin/bash
# Scale with dedicated aggregators (root; tools/cluster): one dedicated aggregator and one worker per
# emulated node (ppn 2, aggregators = nodes, spread), node multicast on, links shaped to 10 Mbit/s so
# the network sets the time, not the 2 shared cores; floats at 1%, aggregator forced.
# OmniReduce's setting: each node's aggregator takes the same share of every worker's data however
# many workers there are. Identical patterns keep the union at 1%; random ones grow it.
# MIB sets the vector (default 4; at 4 MiB a node sends about 70 KB a call, close to the links'
# 64 KiB token bucket, which lets part of it through at line rate: use 32 for network-bound times).
# Usage: [MIB=4] [PATTERNS="identical random"] bench/scripts/cluster_dedicated_scale.sh [node counts, default "2 3 4 6"]
#        (results appended to docs/results/scale/dedicated_10mbit_${MIB}MiB.txt)
NODES=${*:-2 3 4 6}
MIB=${MIB:-4}
cd "$(dirname "$0")/../../build"
OUT=../docs/results/scale/dedicated_10mbit_${MIB}MiB.txt
BYTES=$((MIB * 1048576))
for pattern in ${PATTERNS:-identical random}; do
  for n in $NODES; do
    echo "=== $pattern, $n nodes x 2 ranks (1 worker + 1 dedicated aggregator each), 10mbit, ${MIB} MiB, $(date -u +%FT%TZ)" >> $OUT
    env MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS=$n MPIX_SPARSE_ALGORITHM=aggregator \
      ../tools/cluster/cluster.sh --nodes $n --ppn 2 --rate 10mbit -- --timeout 1800 \
      bench/osu_sparse_allreduce -m $BYTES:$BYTES --density 0.01 --pattern $pattern -i 3 -x 1 --time-limit 0 \
      --validate 2>&1 | grep -vE "^# OSU" >> $OUT
  done
done
