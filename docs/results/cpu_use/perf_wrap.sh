#!/bin/bash
# Kept as the record of a probe (docs/performance.md, "Where a call's CPU goes"): one CPU profile per rank,
# from 3 s after start (steady state). Run: mpirun -np 4 perf_wrap.sh ./cpu 1 100; then
# perf report -i /tmp/probe/perf.1.data --no-children --sort dso,symbol. (The whole-run profile dropped -g -D 3000.)
exec perf record -q -e cpu-clock -F 2000 -g -D 3000 -o "/tmp/probe/perf.$OMPI_COMM_WORLD_RANK.data" "$@"
