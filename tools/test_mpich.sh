#!/usr/bin/env bash
# The suite against MPICH (part of tools/test.sh; issue #12): builds into build-mpich/ with MPICH's
# compiler wrapper and runs every test but the soak and the emulated cluster (Open MPI-only scripts).
# The tests know nothing of the MPI: the launcher and its options come from cmake/MpixSparseLauncher.cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-mpich -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_WERROR=ON -DMPI_C_COMPILER=mpicc.mpich \
  -DMPIX_SPARSE_CUDA=OFF -DMPIX_SPARSE_BUILD_BENCH=OFF
cmake --build build-mpich -j"$(nproc)"
cd build-mpich
# mpi_np3_ucx_tcp hung twice in five runs under MPICH (ch4:ucx) on 2026-11-30, not understood; after
# the tests stopped setting UCX_TLS for MPICH's own UCX it passed 16 runs in a row (2026-12-01), so it
# runs again: a hang shows as a timeout here.
ctest --output-on-failure --timeout 600 -LE 'soak|cluster'
