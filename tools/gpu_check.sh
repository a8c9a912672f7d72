#!/usr/bin/env bash
# The GPU check, run on the device machine (an H200; see ../shared/guide/MACHINE.md) from the
# repository root with .gpu carried (tools/gpu_prepare.sh). Builds with CUDA (sm_90) and, alongside,
# without it; runs the CUDA kernel tests (also under compute-sanitizer), the device MPI tests on 1, 2
# and 4 ranks sharing the GPU, the no-CUDA build's device-pointer test, the kernels' bandwidth,
# osu_sparse_allreduce -d cuda on 4 ranks three times (and once under MPS), and the quick suite once.
#
# The device lease returns at most 8 files from $OUT, so the logs travel as one archive
# ($OUT/gpu_check_logs.tar.gz) beside summary.txt and the bench's JSON. Every step is cut to what is
# left of GPU_CHECK_BUDGET seconds (default 500), most important first, so the archive is always
# written before the lease's own limit kills the command.
set -uo pipefail
OUT=${OUT:-$PWD/out/gpu}
BUDGET=${GPU_CHECK_BUDGET:-500}
mkdir -p "$OUT"
LOGS=$(mktemp -d)/gpu_check
mkdir -p "$LOGS"
JOBS=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$PATH:/usr/local/cuda/bin
summary() { echo "$*" | tee -a "$LOGS/summary.txt"; }
finish() {
  cp "$LOGS/summary.txt" "$OUT/" 2>/dev/null
  cp build-gpu/Testing/Temporary/LastTest.log "$LOGS/ctest_last.log" 2>/dev/null
  cp "$LOGS"/*.json "$OUT/" 2>/dev/null
  tar -C "$(dirname "$LOGS")" -czf "$OUT/gpu_check_logs.tar.gz" gpu_check
}
trap finish EXIT
left() { echo $((BUDGET - SECONDS)); }
step() {  # step NAME MAX_SECONDS COMMAND...: runs under a timeout, logs to NAME.log, records the status
  local name=$1 max=$2
  shift 2
  local limit
  limit=$(left)
  if [ "$limit" -lt 15 ]; then
    summary "$name: not run (budget spent)"
    return 1
  fi
  [ "$max" -lt "$limit" ] && limit=$max
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  summary "$name: rc=$rc ($((SECONDS - t0)) s, limit $limit s)"
  return $rc
}
gtest_counts() {  # what a gtest log ran, skipped and failed: a skipped CUDA test must show here
  summary "  $(grep -c '^\[       OK \]' "$1") ok, $(grep -c '^\[  SKIPPED \]' "$1") skipped," \
    "$(grep -c '^\[  FAILED  \]' "$1") failed lines"
}

{ nvidia-smi || true; nvcc --version || true; g++ --version || true; ucx_info -v || true
  ompi_info --parsable | grep -i -e cuda -e 'ompi:version:full' || true
  ls -l /usr/lib/x86_64-linux-gnu/libucp.so* || true; nproc; free -g; } >"$LOGS/machine.txt" 2>&1

# Warnings are reported, not errors: this machine's g++ is newer than CI's, and a new warning must
# not cost the only build of the lease.
UCX_ARGS=(-DUCX_ROOT="$PWD/.gpu/ucx")
BOOST_ARGS=(-DBoost_DIR="$(echo "$PWD"/.gpu/boost/lib/x86_64-linux-gnu/cmake/Boost-*)" -DBoost_USE_STATIC_LIBS=ON)
step configure 90 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_WERROR=OFF \
  -DMPIX_SPARSE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${UCX_ARGS[@]}" "${BOOST_ARGS[@]}" || exit 1
step configure_nocuda 90 cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=Release -DMPIX_SPARSE_CUDA=OFF \
  -DMPIX_SPARSE_BUILD_BENCH=OFF -DMPIX_SPARSE_BUILD_EXAMPLES=OFF "${UCX_ARGS[@]}"
# The no-CUDA test program builds beside the main build, on a few of the cores.
step build_nocuda 240 cmake --build build-nocuda -j 4 --target device_pointer_without_cuda &
nocuda_build=$!
step build 300 cmake --build build-gpu -j "$JOBS" || { wait; exit 1; }
wait "$nocuda_build"
summary "  build warnings: $(grep -c 'warning' "$LOGS/build.log")"

step kernel_tests 90 build-gpu/tests/unit_tests \
  --gtest_filter='*DeviceBoundary*:*CudaBoundary*:*DeviceMemoryPossible*:*PackedSource*:*StagedResultSink*'
gtest_counts "$LOGS/kernel_tests.log"
step device_mpi_tests 200 ctest --test-dir build-gpu -R 'mpi_device' --output-on-failure --timeout 180 -j 4
summary "  $(grep -a -e 'tests passed' -e 'Skipped' "$LOGS/device_mpi_tests.log" | tr '\n' ' ')"
step nocuda_pointer 60 ctest --test-dir build-nocuda -R device_pointer_without_cuda --output-on-failure
step kernels_memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 3 build-gpu/tests/unit_tests \
  --gtest_filter='*DeviceBoundary*cuda*:*PackedSource*:*StagedResultSink*'
gtest_counts "$LOGS/kernels_memcheck.log"
step kernels_bandwidth 90 build-gpu/bench/device_kernels_bandwidth --repeats 11
osu_step() {  # osu_step NAME MAX_SECONDS ARGS...: osu_sparse_allreduce -d cuda on 4 ranks, validated, JSON kept
  local name=$1 max=$2
  shift 2
  step "$name" "$max" mpirun --bind-to none -np 4 build-gpu/bench/osu_sparse_allreduce -d cuda --validate \
    --json "$LOGS/$name.json" "$@"
}
SWEEP=(-m 67108864:268435456 --density "0.001,0.01,0.1,0.5,1" -i 10 -x 2)
osu_step osu_cuda_run1 120 "${SWEEP[@]}" --time-limit 4
step quick_suite 150 ctest --test-dir build-gpu -LE 'soak|pytorch|cluster' --timeout 120 -j 8
summary "  $(grep -a 'tests passed' "$LOGS/quick_suite.log")"
osu_step osu_cuda_run2 120 "${SWEEP[@]}" --time-limit 4
osu_step osu_cuda_run3 120 "${SWEEP[@]}" --time-limit 4
osu_step osu_cuda_1gib 90 -m 1073741824:1073741824 --density 0.01,0.1,1 -i 5 -x 1 --time-limit 6
# Ranks sharing the GPU under MPS (their contexts no longer time-slice), when the daemon starts.
if timeout 10 nvidia-cuda-mps-control -d >/dev/null 2>&1; then
  osu_step osu_cuda_mps 60 "${SWEEP[@]}" --time-limit 2
  echo quit | timeout 10 nvidia-cuda-mps-control
fi
echo "---- summary"
cat "$LOGS/summary.txt"
