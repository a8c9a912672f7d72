#!/usr/bin/env bash
# One-off second device call: the ctest-driven parts that CMake 4's discovery broke in the first call,
# and one bench run under MPS. Logs straight into $OUT (few files).
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
S=$OUT/summary.txt
t0=$SECONDS
BOOST_DIR=$(echo "$PWD"/.gpu/boost/lib/x86_64-linux-gnu/cmake/Boost-*)
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_WERROR=OFF -DMPIX_SPARSE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DUCX_ROOT="$PWD/.gpu/ucx" -DBoost_DIR="$BOOST_DIR" -DBoost_USE_STATIC_LIBS=ON &&
  cmake --build build-gpu -j 16; } > "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS - t0)) s" | tee -a $S
t0=$SECONDS
timeout 120 ctest --test-dir build-gpu -R 'mpi_device' --output-on-failure --timeout 100 -j 4 > "$OUT/device_mpi_tests.log" 2>&1
echo "device_mpi_tests rc=$? $((SECONDS - t0)) s" | tee -a $S
t0=$SECONDS
timeout 150 ctest --test-dir build-gpu -LE 'soak|pytorch|cluster' --timeout 120 -j 10 > "$OUT/quick_suite.log" 2>&1
echo "quick_suite rc=$? $((SECONDS - t0)) s" | tee -a $S
grep -a -e 'tests passed' -e 'Failed\|\*\*\*' "$OUT/quick_suite.log" | head -20 | tee -a $S
t0=$SECONDS
if timeout 10 nvidia-cuda-mps-control -d; then
  timeout 45 mpirun --bind-to none -np 4 build-gpu/bench/osu_sparse_allreduce -d cuda -m 67108864:268435456 \
    --density 0.001,0.01,0.1,0.5,1 -i 10 -x 2 --time-limit 2 --validate > "$OUT/osu_cuda_mps.log" 2>&1
  echo "osu_cuda_mps rc=$? $((SECONDS - t0)) s" | tee -a $S
  echo quit | timeout 10 nvidia-cuda-mps-control
else
  echo "no MPS" | tee -a $S
fi
