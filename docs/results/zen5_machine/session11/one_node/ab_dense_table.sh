#!/bin/bash
# One node, 4 ranks: auto against each algorithm forced, with the default dense table (A) and a
# candidate one given by MPIX_SPARSE_COST_DENSE_TABLE (B), launches alternated.
# Usage (from build/): [NP=4] ab_dense_table.sh ROUNDS TABLE OUTDIR
set -u
rounds=$1 table=$2 out=$3
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for v in A B; do
    env_args=()
    [ "$v" = B ] && env_args=(-x "MPIX_SPARSE_COST_DENSE_TABLE=$table")
    timeout 600 mpirun --allow-run-as-root --oversubscribe -np "${NP:-4}" "${env_args[@]}" bench/osu_sparse_allreduce \
      -m 262144:16777216 --density 0.01,0.1,0.5,1 -i 20 -x 10 --forced --validate \
      --json "$out/${v}_run$r.json" > "$out/${v}_run$r.txt" 2>&1
    echo "$v run $r rc=$?"
  done
done
