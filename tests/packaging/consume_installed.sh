#!/usr/bin/env bash
# consume_installed.sh BUILD_DIR SOURCE_DIR MPIRUN...: installs the build into a scratch prefix, then
# uses it as a user would: the examples built out of tree with find_package(mpix_sparse), and the
# minimal example compiled with mpicc and pkg-config; both run on 2 ranks; the loaded library's
# version matches the header's.
# $MPICC: the MPI compiler wrapper of the MPI the library was built with (default mpicc); $MPIFC:
# its Fortran wrapper (the Fortran module is then compiled with it too).
set -euo pipefail
MPICC=${MPICC:-mpicc}
build=$1 src=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -1)

cmake -S "$src/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$work/prefix" -DMPI_C_COMPILER="$MPICC" >/dev/null
cmake --build "$work/examples" -j2 >/dev/null
LD_LIBRARY_PATH=$libdir "$@" -np 2 "$work/examples/minimal_allreduce" | tee "$work/cmake.out"
grep -q '^rc=0 sum\[0\]=' "$work/cmake.out"

export PKG_CONFIG_PATH=$libdir/pkgconfig
pkg-config --exists mpix_sparse
echo "pkg-config: mpix_sparse $(pkg-config --modversion mpix_sparse): $(pkg-config --cflags --libs mpix_sparse)"
"$MPICC" "$src/examples/minimal_allreduce.c" $(pkg-config --cflags --libs mpix_sparse) -Wl,-rpath,"$libdir" \
  -o "$work/minimal_pc"
"$@" -np 2 "$work/minimal_pc" | tee "$work/pc.out"
grep -q '^rc=0 sum\[0\]=' "$work/pc.out"

cat >"$work/version.c" <<'C'
#include <stdio.h>
#include <mpix_sparse/mpix_sparse.h>
int main(void) {
    int a, b, c;
    MPIX_Sparse_get_version(&a, &b, &c);
    printf("header %d, library %d.%d.%d\n", MPIX_SPARSE_VERSION, a, b, c);
    return MPIX_SPARSE_VERSION == a * 10000 + b * 100 + c ? 0 : 1;
}
C
"$MPICC" "$work/version.c" $(pkg-config --cflags --libs mpix_sparse) -Wl,-rpath,"$libdir" -o "$work/version"
"$work/version"

# The Fortran module (when installed): the example built by CMake above, and with the MPI wrapper
# ($MPIFC) as docs/fortran.md shows.
if [ -f "$work/prefix/include/mpix_sparse/fortran/mpix_sparse_f08.mod" ]; then
  "$@" -np 2 "$work/examples/fortran_sparse_allreduce" | tee "$work/f08_cmake.out"
  grep -q '^ierror=0 ' "$work/f08_cmake.out"
  if [ -n "${MPIFC:-}" ]; then
    "$MPIFC" -I"$work/prefix/include/mpix_sparse/fortran" "$src/examples/fortran/sparse_allreduce.f90" \
      -L"$libdir" -lmpix_sparse_f08 -lmpix_sparse -Wl,-rpath,"$libdir" -o "$work/f08_wrapper"
    "$@" -np 2 "$work/f08_wrapper" | tee "$work/f08_wrapper.out"
    grep -q '^ierror=0 ' "$work/f08_wrapper.out"
  fi
fi
echo "consume_installed: ok"
