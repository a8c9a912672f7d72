#!/bin/bash
# One node: auto against each algorithm forced, with the library's defaults (B) and with one setting
# given in the environment (A), launches alternated.
# Usage (from build/): [NP=4] [SIZES=262144:16777216] [DENSITIES=0.01,...] ab_env.sh ROUNDS VAR=VALUE OUTDIR
set -u
rounds=$1 setting=$2 out=$3
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for v in A B; do
    env_args=()
    [ "$v" = A ] && env_args=(-x "$setting")
    timeout 600 mpirun --allow-run-as-root --oversubscribe -np "${NP:-4}" "${env_args[@]}" bench/osu_sparse_allreduce \
      -m "${SIZES:-262144:16777216}" --density "${DENSITIES:-0.01,0.02,0.05,0.1,0.5,1}" -i 20 -x 10 --forced --validate \
      --json "$out/${v}_run$r.json" > "$out/${v}_run$r.txt" 2>&1
    echo "$v run $r rc=$?"
  done
done
