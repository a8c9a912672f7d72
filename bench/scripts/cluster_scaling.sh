#!/bin/bash
# Scaling across emulated nodes: flat, hierarchical, dedicated at 64 MiB (root; tools/cluster).
cd "$(dirname "$0")/../../build"
C=../tools/cluster/cluster.sh
OUT=../docs/results/cluster_scaling.txt
rm -f $OUT
run() { # label nodes ppn env...
  local label=$1 nodes=$2 ppn=$3; shift 3
  echo "=== $label: $nodes nodes x $ppn ranks, $*" >> $OUT
  env "$@" $C --nodes $nodes --ppn $ppn --rate 1gbit -- --timeout 900 bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,1 -i 3 -x 1 --validate 2>&1 | grep -vE "^# OSU" >> $OUT
}
run flat 2 1 MPIX_SPARSE_HIERARCHICAL=off
run flat 4 1 MPIX_SPARSE_HIERARCHICAL=off
run flat 4 2 MPIX_SPARSE_HIERARCHICAL=off
run hierarchical 2 2 MPIX_SPARSE_HIERARCHICAL=on
run hierarchical 4 2 MPIX_SPARSE_HIERARCHICAL=on
run dedicated-2-aggregators 2 2 MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS=2
run dedicated-2-aggregators 3 2 MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS=2
run dedicated-2-aggregators 4 2 MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS=2
echo done >> $OUT
