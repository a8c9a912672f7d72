#!/usr/bin/env bash
# Installs what is missing, builds, and runs the full test suite: the sanitizer stage
# (tools/sanitize.sh: ASan/UBSan with leak checks and 60 s of fuzzing, TSan unit tests), the suite
# against MPICH (tools/test_mpich.sh), then the main build's suite with Open MPI (unit tests, MPI
# tests on 1-4 ranks with shared memory and UCX_TLS=tcp, device paths on the emulated device,
# faults, a short soak, packaging, large counts, kernel-counted wire bytes, and the emulated 4-node
# cluster when run as root). Ends with ctest's summary; fails if any stage failed.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
failed=()
tools/sanitize.sh || failed+=(sanitizers)
tools/test_mpich.sh || failed+=(MPICH)
tools/build.sh
cd build
ctest --output-on-failure --timeout 900 -LE 'soak|pytorch' || failed+=("Open MPI suite")
if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]} (each stage's output is above)"
  exit 1
fi
