#!/bin/bash
# 4 emulated nodes x 1 rank at 1 Gbit/s, 16-64 MiB, 0.1%-100% (root; tools/cluster).
cd "$(dirname "$0")/../../build"
../tools/cluster/cluster.sh --nodes 4 --ppn 1 --rate 1gbit -- --timeout 1500 bench/osu_sparse_allreduce \
  -m 16777216:67108864 --density 0.001,0.01,0.1,0.5,1 -i 5 -x 1 --validate \
  --json ../docs/results/cluster_4nodes_1ppn_1gbit.json > ../docs/results/cluster_4nodes_1ppn_1gbit.txt 2>&1
