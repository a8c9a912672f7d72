#!/usr/bin/env bash
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=$PATH:/usr/local/cuda/bin
{ command -v pkg-config gfortran mpifort python3; python3 -c 'import setuptools; print(setuptools.__version__)'; } > "$OUT/env.txt" 2>&1
BOOST_DIR=$(echo "$PWD"/.gpu/boost/lib/x86_64-linux-gnu/cmake/Boost-*)
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DUCX_ROOT="$PWD/.gpu/ucx" -DBoost_DIR="$BOOST_DIR" -DBoost_USE_STATIC_LIBS=ON &&
  cmake --build build-gpu -j 16; } > "$OUT/build.log" 2>&1
echo "build rc=$?"
timeout 60 ctest --test-dir build-gpu -R 'packaging_consume_installed|python_pip_install' --output-on-failure -V > "$OUT/packaging.log" 2>&1
echo "packaging rc=$?"
timeout 40 mpirun --bind-to none -np 2 build-gpu/bench/osu_sparse_allreduce -d cuda -m 67108864:67108864 \
  --density 0.001,0.01,0.1,0.5,1 -i 10 -x 2 --time-limit 2 --validate > "$OUT/osu_cuda_np2.log" 2>&1
echo "osu np2 rc=$?"
