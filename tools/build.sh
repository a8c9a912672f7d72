#!/usr/bin/env bash
# Configures and builds mpix_sparse (Release, warnings as errors) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_WERROR=ON "$@"
cmake --build build -j"$(nproc)"
