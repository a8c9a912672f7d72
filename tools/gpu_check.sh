#!/usr/bin/env bash
# The GPU check, run on the device machine (an H200; see ../shared/guide/MACHINE.md) from the
# repository root with .gpu carried (tools/gpu_prepare.sh). Builds with CUDA (sm_90), runs the CUDA
# kernel tests, the device MPI tests on 1, 2 and 4 ranks sharing the GPU, the whole suite once, the
# no-CUDA build's device-pointer test, the kernels' bandwidth, and osu_sparse_allreduce -d cuda on 4
# ranks. Everything goes to $OUT (logs, JSON); a summary is printed last. Budget: ~10 minutes.
set -uo pipefail
OUT=${OUT:-$PWD/out/gpu}
mkdir -p "$OUT"
JOBS=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }
step() {  # step NAME COMMAND...: runs, logs to $OUT/NAME.log, records the status
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  summary "$name: rc=$rc ($((SECONDS - t0)) s)"
  return $rc
}
{ nvidia-smi || true; nvcc --version || true; ucx_info -v || true; ompi_info --parsable | grep -i cuda || true; } \
  >"$OUT/machine.txt" 2>&1

UCX_ARGS=(-DUCX_ROOT="$PWD/.gpu/ucx")
step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_WERROR=ON -DMPIX_SPARSE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "${UCX_ARGS[@]}" || { cat "$OUT/configure.log"; exit 1; }
step build cmake --build build-gpu -j "$JOBS" || { tail -50 "$OUT/build.log"; exit 1; }
step kernel_tests build-gpu/tests/unit_tests --gtest_filter='*DeviceBoundary*cuda*:*Packed*:*Staged*'
step device_mpi_tests ctest --test-dir build-gpu -R 'mpi_device' --output-on-failure --timeout 300
step full_suite ctest --test-dir build-gpu -E cluster --timeout 600 -j 8
step kernels_bandwidth build-gpu/bench/device_kernels_bandwidth --repeats 11
for rep in 1 2 3; do
  step "osu_cuda_run$rep" mpirun --bind-to none -np 4 build-gpu/bench/osu_sparse_allreduce -d cuda \
    -m 67108864:1073741824 --density 0.001,0.01,0.1,0.5,1 -i 10 -x 2 --time-limit 8 --validate \
    --json "$OUT/osu_cuda_run$rep.json"
done
# The library built without CUDA, handed a real device pointer.
step configure_nocuda cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_CUDA=OFF \
  -DMPIX_SPARSE_BUILD_BENCH=OFF -DMPIX_SPARSE_BUILD_EXAMPLES=OFF "${UCX_ARGS[@]}"
step build_nocuda cmake --build build-nocuda -j "$JOBS" --target device_pointer_without_cuda
step nocuda_pointer ctest --test-dir build-nocuda -R device_pointer_without_cuda --output-on-failure
cp build-gpu/Testing/Temporary/LastTest.log "$OUT/ctest_last.log" 2>/dev/null || true
echo "---- summary"; cat "$OUT/summary.txt"
