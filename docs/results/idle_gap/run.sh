#!/usr/bin/env bash
# Reruns every measurement of "The first call after an idle gap" (docs/performance.md) from the
# repository root after tools/build.sh; writes the outputs to OUT_DIR (default out/idle_gap).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-out/idle_gap}
mkdir -p "$out"
here=docs/results/idle_gap
mpicxx -O2 -std=c++17 -I include "$here/gap.cc" -o "$out/gap" -L build -lmpix_sparse -Wl,-rpath,"$PWD/build"
mpicxx -O2 -std=c++17 -I include docs/results/zero_length/library_loop.cc -o "$out/loop" -L build -lmpix_sparse \
  -Wl,-rpath,"$PWD/build"
g++ -O2 -std=c++17 "$here/memgap.cc" -o "$out/memgap"
run=(mpirun --allow-run-as-root --oversubscribe -np 4)
kinds=none,mpi,sleep,spin,memcpy,sleep+copy
for d in 0.5 1; do
  MPIX_SPARSE_PROFILE=on "${run[@]}" -x MPIX_SPARSE_PROFILE "$out/gap" "$d" 15 0.4 "$kinds" > "$out/library_$d.txt"
done
PROBE=1 "${run[@]}" -x PROBE "$out/gap" 0.5 15 0.4 "$kinds" > "$out/probe_memory.txt"
PROBE=compute "${run[@]}" -x PROBE "$out/gap" 0.5 15 0.4 "$kinds" > "$out/probe_compute.txt"
# memgap: one run per line (stride 16), three per page (stride 1024: its cost varies run to run).
for pass in "16 1" "1024 1" "1024 2" "1024 3"; do
  read -r stride round <<< "$pass"
  for huge in "" 1; do
    name="memgap_stride${stride}_huge${huge:-0}"
    for cpu in 0 1; do
      HUGE=$huge STRIDE=$stride taskset -c $cpu "$out/memgap" 20 0.4 > "$out/${name}_cpu${cpu}_run$round.txt" &
    done
    wait
  done
done
for i in 1 2 3; do
  for d in 0.01 0.5 1; do FLOOR=1 "${run[@]}" -x FLOOR "$out/loop" "$d" 30 >> "$out/loop_run$i.txt"; done
done
g++ -O2 -std=c++17 -pthread "$here/pingpong.cc" -o "$out/pingpong"
for i in 1 2 3; do "$out/pingpong"; done > "$out/pingpong.txt"
tail -n +1 "$out"/*.txt
