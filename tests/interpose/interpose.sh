#!/usr/bin/env bash
# interpose.sh PROGRAM PRELOAD MPIRUN...: runs an unmodified MPI program (plain_allreduce.c) on 4 ranks
# without and with the interposer (PRELOAD = libmpix_sparse_interpose.so). The results must be
# identical, and with the interposer the library must have served the calls sending under 10% of
# what the buffers hold (MPIX_SPARSE_REPORT=1). The environment reaches the ranks through the
# launcher arguments that CMake passes after MPIRUN (mpix_sparse_env): here through env(1).
set -euo pipefail
program=$1 preload=$2
shift 2
plain=$("$@" -np 4 env -u MPIX_SPARSE_INTERPOSE "$program" 2>&1)
echo "without: $plain"
with=$("$@" -np 4 env LD_PRELOAD="$preload" MPIX_SPARSE_INTERPOSE=1 MPIX_SPARSE_REPORT=1 "$program" 2>&1)
echo "$with"
a=$(grep -o 'checksum [0-9a-f]*' <<<"$plain")
b=$(grep -o 'checksum [0-9a-f]*' <<<"$with")
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: results differ ($a vs $b)"; exit 1; }
reports=$(grep -c 'mpix_sparse report' <<<"$with" || true)
[ "$reports" -eq 4 ] || { echo "FAIL: $reports reports, expected one per rank"; exit 1; }
# Each rank's buffer: 16 MiB x 10 calls; sent must stay under 10% of it.
while read -r sent; do
  [ "$sent" -lt $((16 * 1024 * 1024 * 10 / 10)) ] || { echo "FAIL: a rank sent $sent bytes"; exit 1; }
done < <(grep 'mpix_sparse report' <<<"$with" | sed -E 's/.* ([0-9]+) bytes sent.*/\1/')
if grep -q 'mpix_sparse report' <<<"$plain"; then echo "FAIL: the library ran without the interposer"; exit 1; fi
# Every MPI_Allreduce routed, however small: the library's own small allreduces (on communicators it
# creates while setting one up) must not come back through the interposer, or set-up recurses.
every=$(timeout 120 "$@" -np 4 env LD_PRELOAD="$preload" MPIX_SPARSE_INTERPOSE=1 MPIX_SPARSE_INTERPOSE_MIN_BYTES=1 \
  "$program" 2>&1) || { echo "$every" | tail -20; echo "FAIL: with every call routed the program failed"; exit 1; }
c=$(grep -o 'checksum [0-9a-f]*' <<<"$every")
[ "$a" = "$c" ] || { echo "FAIL: results differ with every call routed ($a vs $c)"; exit 1; }
echo "interpose: identical results, $(grep 'mpix_sparse report' <<<"$with" | head -1 | sed 's/.*calls, //')"
