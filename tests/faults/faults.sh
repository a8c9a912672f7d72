#!/usr/bin/env bash
# faults.sh SCENARIO EXE MPIRUN...: runs the fault scenario on 3 ranks and checks that ranks 0 and 2
# (and, where it survives, rank 1) report "ok". See faults.cc.
set -uo pipefail
scenario=$1 exe=$2
shift 2
out=$(mktemp)
reports=$(mktemp -d)
trap 'rm -rf "$out" "$reports"' EXIT
# For the exit scenario the launcher must let the survivors run on after a rank dies (CMake passes
# MPIX_SPARSE_MPIRUN_SURVIVE for that).
timeout 120 "$@" -np 3 "$exe" "$scenario" "$reports" >"$out" 2>&1
rc=$?
cat "$out"
expect=(0 2)
[ "$scenario" != exit ] && expect=(0 1 2)
for r in "${expect[@]}"; do
  # The report file, not the launcher's output: an abort may cut that short (see faults.cc).
  if ! grep -q "^rank $r: ok" "$reports/rank.$r" 2>/dev/null; then
    echo "faults.sh: rank $r did not report ok (mpirun rc=$rc); the reports:"
    cat "$reports"/rank.* 2>/dev/null
    exit 1
  fi
done
# Every scenario but the exit ends with MPI_Finalize on all ranks.
if [ "$scenario" != exit ] && [ $rc -ne 0 ]; then
  echo "faults.sh: mpirun returned $rc"
  exit 1
fi
echo "faults.sh: $scenario ok"
