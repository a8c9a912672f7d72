#!/bin/bash
# Node multicast of results on the emulated cluster (root; tools/cluster): dedicated aggregators (2)
# and colocated flat, with mpix_sparse_node_multicast off and on, 1 Gbit/s links, 64 MiB floats.
# Random patterns (the union grows with the workers) and identical ones (the union stays 1%).
# Usage: bench/scripts/cluster_multicast.sh [run numbers, default 1]   (results: docs/results/node_multicast/,
# one file per mode and run: the medians over runs are taken from those files)
RUNS=${*:-1}
cd "$(dirname "$0")/../../build"
C=../tools/cluster/cluster.sh
OUT=../docs/results/node_multicast
mkdir -p $OUT
run() { # file nodes ppn densities env...
  local file=$1 nodes=$2 ppn=$3 densities=$4; shift 4
  for pattern in random identical; do
    for mc in off on; do
      echo "=== $nodes nodes x $ppn ranks, $pattern, multicast $mc, $*" >> $OUT/$file
      env MPIX_SPARSE_NODE_MULTICAST=$mc "$@" $C --nodes $nodes --ppn $ppn --rate 1gbit -- --timeout 1100 \
        bench/osu_sparse_allreduce -m 67108864:67108864 --density $densities --pattern $pattern -i 3 -x 1 --validate \
        2>&1 | grep -vE "^# OSU" >> $OUT/$file
    done
  done
}
for r in $RUNS; do
  rm -f $OUT/dedicated_run$r.txt $OUT/flat_run$r.txt
  D="MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS=2 MPIX_SPARSE_ALGORITHM=aggregator"
  for shape in "2 2" "3 2" "4 2" "4 4"; do
    run dedicated_run$r.txt $shape 0.01 $D
  done
  run flat_run$r.txt 4 2 0.01,1 MPIX_SPARSE_HIERARCHICAL=off MPIX_SPARSE_ALGORITHM=aggregator
  echo done >> $OUT/flat_run$r.txt
done
