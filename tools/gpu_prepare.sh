#!/usr/bin/env bash
# Prepares what the GPU machine lacks for tools/gpu_check.sh, into .gpu/ (git-ignored), to be carried:
#   tools/gpu_prepare.sh   then, with the device tool:   run(command="tools/gpu_check.sh", carry=[".gpu"])
# - .gpu/ucx: UCX headers (it has the UCX runtime but not libucx-dev).
# - .gpu/boost: Boost.Program_options for the bench (it has Boost's headers but none of its compiled
#   libraries): this machine's static library with its CMake package files and exactly the Boost
#   headers the bench's sources include (so no header of another Boost version mixes in), as a
#   prefix that tools/gpu_check.sh hands CMake with Boost_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu/ucx .gpu/boost
mkdir -p .gpu/ucx/include
for d in ucp uct ucs ucm; do
  if [ -d "/usr/include/$d" ]; then cp -r "/usr/include/$d" .gpu/ucx/include/; fi
done
test -f .gpu/ucx/include/ucp/api/ucp.h || { echo "no UCX headers here (apt-get install libucx-dev)" >&2; exit 1; }

libdir=/usr/lib/x86_64-linux-gnu
version=$(basename "$(ls -d $libdir/cmake/Boost-* | head -1)" | sed 's/^Boost-//')
test -f "$libdir/libboost_program_options.a" ||
  { echo "no static Boost.Program_options here (apt-get install libboost-program-options-dev)" >&2; exit 1; }
mkdir -p .gpu/boost/include .gpu/boost/lib/x86_64-linux-gnu/cmake
cp "$libdir/libboost_program_options.a" .gpu/boost/lib/x86_64-linux-gnu/
for pkg in "Boost-$version" "boost_headers-$version" "boost_program_options-$version" \
  "BoostDetectToolset-$version.cmake"; do
  cp -r "$libdir/cmake/$pkg" .gpu/boost/lib/x86_64-linux-gnu/cmake/
done
# The static variant only: the shared library is not carried.
rm -f .gpu/boost/lib/x86_64-linux-gnu/cmake/boost_program_options-"$version"/*variant-shared.cmake
for src in bench/bench_options.cc bench/osu_sparse_iallreduce.cc; do
  # shellcheck disable=SC2046  # the MPI wrapper's flags, one word each
  g++ -std=c++17 -M -I include -I src -I bench $(mpicxx --showme:compile) -DOMPI_SKIP_MPICXX "$src"
done | tr ' \\' '\n\n' | grep '^/usr/include/boost/' | sort -u |
  while read -r header; do
    mkdir -p ".gpu/boost/include/$(dirname "${header#/usr/include/}")"
    cp "$header" ".gpu/boost/include/${header#/usr/include/}"
  done
cp -r /usr/include/boost/config /usr/include/boost/program_options .gpu/boost/include/boost/
du -sh .gpu/ucx .gpu/boost
