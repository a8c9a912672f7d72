#!/bin/bash
# The README's main job (with --profile) alternated ROUNDS times: glibc's malloc defaults against a
# malloc that keeps freed large blocks in every rank (the environment equivalent of the bench's later
# --keep-heap). Run from the repository root after tools/build.sh. Usage: malloc_alternation.sh ROUNDS OUT
R=$1; out=$2; mkdir -p "$out"
run() { # tag, then environment assignments
  local tag=$1; shift
  echo "## $tag $(date -u +%FT%TZ)"
  env "$@" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MALLOC_MMAP_THRESHOLD_ -x MALLOC_TRIM_THRESHOLD_ \
    build/bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 20 -x 3 --validate --profile
}
for r in $(seq "$R"); do
  run default MALLOC_MMAP_THRESHOLD_= MALLOC_TRIM_THRESHOLD_= > "$out/default_run$r.txt"
  run kept MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=17179869184 > "$out/kept_run$r.txt"
done
