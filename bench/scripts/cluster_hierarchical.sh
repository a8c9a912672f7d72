#!/bin/bash
# Hierarchical (with the packed node broadcast) against flat at 64 MiB, 2x2 and 4x2 nodes (root; tools/cluster).
cd "$(dirname "$0")/../../build"
C=../tools/cluster/cluster.sh
OUT=../docs/results/cluster_hierarchical.txt
rm -f $OUT
run() { local label=$1 nodes=$2 ppn=$3; shift 3
  echo "=== $label: $nodes nodes x $ppn ranks, $*" >> $OUT
  env "$@" $C --nodes $nodes --ppn $ppn --rate 1gbit -- --timeout 900 bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,1 -i 3 -x 1 --validate 2>&1 | grep -vE "^# OSU" >> $OUT
}
run hierarchical 2 2 MPIX_SPARSE_HIERARCHICAL=on
run hierarchical 4 2 MPIX_SPARSE_HIERARCHICAL=on
run flat 4 2 MPIX_SPARSE_HIERARCHICAL=off
echo done >> $OUT
