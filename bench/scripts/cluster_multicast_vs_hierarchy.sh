#!/bin/bash
# Flat with node multicast against the hierarchical reduction (the default across nodes with several
# ranks on one) on 4 emulated nodes x 2 ranks, 1 Gbit/s, 64 MiB floats, random or identical, 1% and 100%; both
# with the planner's choice (no algorithm forced). Root; tools/cluster.
# Usage: [PATTERN=identical] bench/scripts/cluster_multicast_vs_hierarchy.sh [runs]
#   (docs/results/node_multicast/vs_hierarchy_<pattern>.txt)
RUNS=${1:-3}
cd "$(dirname "$0")/../../build"
C=../tools/cluster/cluster.sh
OUT=../docs/results/node_multicast/vs_hierarchy_${PATTERN:-random}.txt
rm -f $OUT
for r in $(seq $RUNS); do
  for mode in "MPIX_SPARSE_HIERARCHICAL=auto" "MPIX_SPARSE_HIERARCHICAL=off MPIX_SPARSE_NODE_MULTICAST=on"; do
    echo "=== run $r: 4 nodes x 2 ranks, $mode" >> $OUT
    env $mode $C --nodes 4 --ppn 2 --rate 1gbit -- --timeout 900 bench/osu_sparse_allreduce -m 67108864:67108864 \
      --density 0.01,1 --pattern ${PATTERN:-random} -i 3 -x 1 --validate 2>&1 | grep -vE "^# OSU" >> $OUT
  done
done
echo done >> $OUT
