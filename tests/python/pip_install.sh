#!/usr/bin/env bash
# pip_install.sh PYTHON SOURCE_DIR LIBRARY: installs the Python package as a user would (a fresh venv
# that sees the system's numpy and mpi4py, `pip install` of SOURCE_DIR/python without network or build
# isolation), then imports it from outside the source tree and runs a 1-rank allreduce (singleton MPI)
# against LIBRARY (the library under test, through MPIX_SPARSE_LIBRARY).
set -euo pipefail
python=$1 src=$2 library=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
# The fresh venv sees the base interpreter's packages. Where PYTHON is itself a venv's (the GPU test
# machine's /opt/torch/.venv), numpy and mpi4py live in that venv and this one cannot see them: pip
# would then look for numpy on a network there is none of. Not this package's failure: skip (77).
if ! "$work/venv/bin/python" -c "import numpy, mpi4py" 2>/dev/null; then
  echo "pip_install: skipped: a venv of $python does not see numpy and mpi4py"
  exit 77
fi
# A copy of the package directory: pip's setuptools build writes build/ and *.egg-info next to it.
cp -r "$src/python" "$work/package"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-build-isolation --disable-pip-version-check \
  "$work/package"
"$work/venv/bin/python" -m pip show mpix_sparse | grep -E '^(Name|Version|Location)'
cd "$work"
unset PYTHONPATH
MPIX_SPARSE_LIBRARY=$library "$work/venv/bin/python" - <<'PY'
import numpy as np
from mpi4py import MPI
import mpix_sparse

assert "/venv/" in mpix_sparse.__file__, mpix_sparse.__file__  # the installed copy, not the source tree
send = np.zeros(1 << 16, dtype=np.float32)
send[4096:4352] = 2.0
total = mpix_sparse.allreduce(send)
assert np.array_equal(total, send * MPI.COMM_WORLD.Get_size())
i, v = mpix_sparse.allreduce_elements([7, 3, 7], np.array([1.0, 2.0, 3.0]), 10)
assert i.tolist() == [3, 7] and v.tolist() == [2.0, 4.0]
print(f"pip_install: mpix_sparse {mpix_sparse.__version__} from {mpix_sparse.__file__}, library "
      f"{'.'.join(map(str, mpix_sparse.get_version()))} at {mpix_sparse.library_path}: ok")
PY
