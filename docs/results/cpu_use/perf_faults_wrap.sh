#!/bin/bash
# Kept as the record of a probe (docs/performance.md, "Where a call's CPU goes"): every page fault of a rank
# with its call graph, from 3 s after start. Run: mpirun -np 4 perf_faults_wrap.sh ./cpu 1 200.
exec perf record -q -e page-faults -c 1 -g -D 3000 -o "/tmp/probe/pf.$OMPI_COMM_WORLD_RANK.data" "$@"
