#!/bin/bash
# Flat, hierarchical and dedicated aggregators on 4 emulated nodes x 2 ranks, 16-64 MiB (root).
cd "$(dirname "$0")/../../build"
C=../tools/cluster/cluster.sh
OUT=../docs/results/cluster_4nodes_2ppn_modes.txt
rm -f $OUT
run() { # name env...
  local name=$1; shift
  echo "=== $name" >> $OUT
  env "$@" $C --nodes 4 --ppn 2 --rate 1gbit -- --timeout 1500 bench/osu_sparse_allreduce -m 16777216:67108864 \
    --density 0.01,0.1,1 -i 3 -x 1 --validate --json ../docs/results/cluster_4nodes_2ppn_$name.json >> $OUT 2>&1
}
run flat MPIX_SPARSE_HIERARCHICAL=off
run hierarchical MPIX_SPARSE_HIERARCHICAL=on
run dedicated MPIX_SPARSE_AGGREGATOR_MODE=dedicated MPIX_SPARSE_AGGREGATORS=4 MPIX_SPARSE_HIERARCHICAL=off
