#!/bin/bash
# Performance sweep for docs/performance.md (run on an otherwise idle machine).
cd "$(dirname "$0")/../../build"
OUT=../docs/results
B="mpirun --allow-run-as-root --oversubscribe --bind-to none"
for p in random clustered zipf identical disjoint; do
  $B -np 4 bench/osu_sparse_allreduce -m 4096:268435456 --density 0.001,0.01,0.1,0.5,1 --pattern $p -i 20 --validate --json $OUT/sweep_4ranks_$p.json > $OUT/sweep_4ranks_$p.txt 2>&1
done
for p in random clustered zipf identical disjoint; do
  $B -np 2 bench/osu_sparse_allreduce -m 4096:268435456 --density 0.001,0.01,0.1,0.5,1 --pattern $p -i 20 --validate --json $OUT/sweep_2ranks_$p.json > $OUT/sweep_2ranks_$p.txt 2>&1
done
$B -np 4 bench/osu_sparse_allreduce --variant elements -m 4194304:268435456 --density 0.001,0.01,0.1 -i 10 --validate --json $OUT/elements_4ranks.json > $OUT/elements_4ranks.txt 2>&1
for n in 2 3 4; do
  $B -np $n bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 20 --validate --json $OUT/scaling_${n}ranks.json > $OUT/scaling_${n}ranks.txt 2>&1
done
echo done > $OUT/.sweep_done
