#!/usr/bin/env bash
# Runs finalize_order on N ranks (mpirun command in $MPIRUN...) and checks that every rank released
# its sparse communicators at MPI_Finalize in the same order, and that their handle values sorted
# differently on different ranks (so the order really came from agreed context ids).
# Usage: finalize_order.sh NP PROGRAM MPIRUN [MPIRUN ARGS...]; the launcher's arguments must tag each
# output line with its rank and set MPIX_SPARSE_DEBUG=1 on every rank (CMake passes them).
set -euo pipefail
np=$1 program=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" -np "$np" "$program" >"$log" 2>&1 || { cat "$log"; exit 1; }
# One rank tag for every launcher: Open MPI's "[1,R]<stderr>:" becomes MPICH's "[R] ".
sed -i -E 's/^\[[0-9]+,([0-9]+)\]<std(out|err)>:/[\1] /' "$log"
grep -q "handle orders differ between ranks: yes" "$log" || { cat "$log"; echo "FAIL: handle orders were the same on every rank: the test shows nothing"; exit 1; }
orders=()
for ((r = 0; r < np; ++r)); do
  orders+=("$(grep "^\[$r\] mpix_sparse: finalize releases context" "$log" | sed 's/.*context //' | tr '\n' ' ')")
done
for ((r = 0; r < np; ++r)); do
  echo "rank $r releases contexts: ${orders[$r]}"
  [[ $(wc -w <<<"${orders[$r]}") -ge 5 ]] || { echo "FAIL: rank $r released fewer than 5 communicators"; exit 1; }
  [[ "${orders[$r]}" == "${orders[0]}" ]] || { echo "FAIL: rank $r released in another order than rank 0"; exit 1; }
done
echo "1 passed, 0 failed"
