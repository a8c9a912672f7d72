#!/usr/bin/env bash
# Installs what is missing, builds, and runs the full test suite (unit tests, MPI tests on 1-4 ranks
# with shared memory and UCX_TLS=tcp, large counts, kernel-counted wire bytes, and the emulated
# 4-node cluster when run as root). Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
cd build
ctest --output-on-failure --timeout 900
