#!/bin/bash
# The 4-rank random sweep twice, --keep-heap first, then glibc's default heap. Run from the
# repository root after tools/build.sh. Usage: sweep.sh OUT
out=$1; mkdir -p "$out"
B="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 build/bench/osu_sparse_allreduce -m 4096:268435456 --density 0.001,0.01,0.1,0.5,1 --pattern random -i 20 --validate"
$B --keep-heap --json "$out/sweep_kept.json" > "$out/sweep_kept.txt" 2>&1
$B --json "$out/sweep_default.json" > "$out/sweep_default.txt" 2>&1
