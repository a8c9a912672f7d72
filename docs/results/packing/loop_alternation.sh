#!/bin/bash
# The alternation behind "Packing contributions" in docs/performance.md: the library loop
# (docs/results/zero_length/library_loop.cc, built as /tmp/loop/loop_cur with RUNPATH to build/)
# run against each library in turn, forwards then backwards, ROUNDS times; LD_LIBRARY_PATH picks
# the library (RUNPATH lets it). Output: library, median ms, floor ms per run.
# usage: [NP=4] loop_alternation.sh ROUNDS DENSITY ITERS dirA dirB ... (each dir holds libmpix_sparse.so.0)
R=$1; D=$2; I=$3; shift 3
run() { FLOOR=1 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${NP:-4}" -x FLOOR -x LD_LIBRARY_PATH=$1 /tmp/loop/loop_cur $D $I | sed "s|^|$(basename $1) |"; }
for _ in $(seq "$R"); do for d in "$@"; do run $d; done; for ((k=$#; k>=1; k--)); do run ${!k}; done; done
