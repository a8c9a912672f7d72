#!/usr/bin/env bash
# Installs what is missing, builds, and runs the full test suite: first the sanitizer stage
# (tools/sanitize.sh: ASan/UBSan with leak checks and 60 s of fuzzing, TSan unit tests), then the
# main build's suite (unit tests, MPI tests on 1-4 ranks with shared memory and UCX_TLS=tcp, device
# paths on the emulated device, faults, a short soak, large counts, kernel-counted wire bytes, and
# the emulated 4-node cluster when run as root). Ends with ctest's summary; fails if either failed.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
sanitize=0
tools/sanitize.sh || sanitize=$?
tools/build.sh
cd build
suite=0
ctest --output-on-failure --timeout 900 -LE soak || suite=$?
if ((sanitize != 0)); then
  echo "test.sh: the sanitizer stage failed (its output is above the main suite)"
fi
exit $((sanitize != 0 || suite != 0))
