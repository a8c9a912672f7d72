#!/usr/bin/env bash
# bench/scripts/before_after.sh on the element variant: 1-16 MiB of floats (256K-4M elements) at
# 0.1/1/10% per rank, against MPI_Allreduce and the allgather of pairs. NP ranks (default 4).
# Usage: bench/scripts/elements_before_after.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR > results.txt
set -euo pipefail
exec "$(dirname "$0")/before_after.sh" "$1" "$2" --variant elements -m 1048576:16777216 --density 0.001,0.01,0.1 \
  -i 50 -x 5 --validate
