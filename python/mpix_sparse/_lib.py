"""Finding and loading the C library (libmpix_sparse) with ctypes, and its prototypes.

The library is looked up, in order, at
  1. $MPIX_SPARSE_LIBRARY (the full path of libmpix_sparse.so),
  2. ctypes.util.find_library("mpix_sparse") (the linker's search path: ldconfig, LD_LIBRARY_PATH),
  3. the libdir of `pkg-config mpix_sparse` (the library installs mpix_sparse.pc; set PKG_CONFIG_PATH
     for a non-standard prefix).
mpi4py is imported first, so the MPI library the C library links against is already loaded (and
initialized) when it is opened.
"""

import ctypes
import ctypes.util
import os
import subprocess

from mpi4py import MPI

REQUIRED_MAJOR = 0  # the C ABI these prototypes describe (include/mpix_sparse/mpix_sparse.h)


def _pkg_config_candidates():
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "mpix_sparse"], capture_output=True,
                                text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return []
    if not libdir:
        return []
    names = (f"libmpix_sparse.so.{REQUIRED_MAJOR}", "libmpix_sparse.so", "libmpix_sparse.dylib")
    return [os.path.normpath(os.path.join(libdir, name)) for name in names]


def _load():
    tried = []
    path = os.environ.get("MPIX_SPARSE_LIBRARY")
    if path:
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            raise ImportError(f"mpix_sparse: MPIX_SPARSE_LIBRARY={path} could not be loaded: {e}") from e
    tried.append("$MPIX_SPARSE_LIBRARY (not set)")
    name = ctypes.util.find_library("mpix_sparse")
    if name:
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            tried.append(f"ctypes.util.find_library: {name}: {e}")
    else:
        tried.append("ctypes.util.find_library('mpix_sparse') (not found)")
    candidates = _pkg_config_candidates()
    for candidate in candidates:
        if os.path.exists(candidate):
            return ctypes.CDLL(candidate), candidate
    tried.append("pkg-config --variable=libdir mpix_sparse " + (f"({', '.join(candidates)} not found)" if candidates
                                                                 else "(no mpix_sparse.pc found)"))
    raise ImportError("mpix_sparse: the C library libmpix_sparse was not found; tried " + "; ".join(tried) +
                      ". Install the library (cmake --install), then set MPIX_SPARSE_LIBRARY to the full path of "
                      "libmpix_sparse.so, or add its directory to LD_LIBRARY_PATH, or its lib/pkgconfig to "
                      "PKG_CONFIG_PATH.")


def _handle_type(cls):
    """The ctypes type of an MPI handle: a pointer (Open MPI) or an int (MPICH), from its size."""
    size = MPI._sizeof(cls)
    if size == ctypes.sizeof(ctypes.c_void_p):
        return ctypes.c_void_p
    if size == ctypes.sizeof(ctypes.c_int):
        return ctypes.c_int
    raise ImportError(f"mpix_sparse: unexpected size {size} of {cls.__name__} handles")


Comm = _handle_type(MPI.Comm)
Datatype = _handle_type(MPI.Datatype)
Op = _handle_type(MPI.Op)
Info = _handle_type(MPI.Info)
Count = ctypes.c_int64  # MPI_Count: 64-bit in Open MPI and MPICH
Request = ctypes.c_void_p  # MPIX_Sparse_request (an opaque pointer)
Vector = ctypes.c_void_p  # MPIX_Sparse_vector (an opaque pointer)
_p = ctypes.c_void_p
_int = ctypes.c_int
_pint = ctypes.POINTER(ctypes.c_int)


class Stats(ctypes.Structure):
    _fields_ = [("calls", Count), ("bytes_sent", Count), ("bytes_received", Count), ("dense_fallbacks", Count),
                ("last_algorithm", ctypes.c_int)]


PROFILE_PHASES = ("scan", "agreement", "dense", "allgather", "stream", "reduce", "result_write", "barrier",
                  "node_broadcast")


class Profile(ctypes.Structure):
    _fields_ = [("calls", Count)] + [(phase, ctypes.c_double) for phase in PROFILE_PHASES]


_PROTOTYPES = {
    "MPIX_Sparse_get_version": [_pint, _pint, _pint],
    "MPIX_Sparse_allreduce": [_p, _p, Count, Datatype, Op, Comm],
    "MPIX_Sparse_iallreduce": [_p, _p, Count, Datatype, Op, Comm, ctypes.POINTER(Request)],
    "MPIX_Sparse_test": [ctypes.POINTER(Request), _pint],
    "MPIX_Sparse_wait": [ctypes.POINTER(Request)],
    "MPIX_Sparse_comm_create": [Comm, Info, _p],  # MPI_Comm *: the address of an mpi4py handle
    "MPIX_Sparse_comm_free": [_p],
    "MPIX_Sparse_stats_get": [Comm, ctypes.POINTER(Stats)],
    "MPIX_Sparse_stats_reset": [Comm],
    "MPIX_Sparse_profile_get": [Comm, ctypes.POINTER(Profile)],
    "MPIX_Sparse_allreduce_elements": [Count, _p, _p, _p, Count, Datatype, Op, Comm],
    "MPIX_Sparse_allreduce_elements_sparse": [Count, _p, _p, Count, Datatype, Op, Comm, ctypes.POINTER(Vector)],
    "MPIX_Sparse_vector_get": [Vector, ctypes.POINTER(Count), ctypes.POINTER(_p), ctypes.POINTER(_p)],
    "MPIX_Sparse_vector_free": [ctypes.POINTER(Vector)],
    "MPIX_Sparse_error_class": [_int],
    "MPIX_Sparse_float16": [],
    "MPIX_Sparse_alloc_mem": [ctypes.c_ssize_t, Info, _p],  # MPI_Aint size; void *baseptr (a void **)
    "MPIX_Sparse_free_mem": [_p],
    "MPIX_Sparse_stats_in_place": [Comm, ctypes.POINTER(Count)],
}

lib, path = _load()
for _name, _argtypes in _PROTOTYPES.items():
    _function = getattr(lib, _name)
    _function.argtypes = _argtypes
    _function.restype = ctypes.c_int
lib.MPIX_Sparse_float16.restype = Datatype

_float16 = None


def float16_datatype():
    """MPIX_FLOAT16 (the library's IEEE binary16 type; MPI has none) as an mpi4py Datatype, for
    numpy.float16 buffers. Made once; the library frees the MPI type at MPI_Finalize."""
    global _float16
    if _float16 is None:
        value = lib.MPIX_Sparse_float16()
        if not value or value == MPI._handleof(MPI.DATATYPE_NULL):
            raise RuntimeError("mpix_sparse: MPIX_FLOAT16 is not available (is MPI initialized?)")
        datatype = MPI.Datatype()  # not owned by mpi4py: never freed by it
        ctypes.memmove(MPI._addressof(datatype), ctypes.byref(Datatype(value)), ctypes.sizeof(Datatype))
        _float16 = datatype
    return _float16


def version():
    major, minor, patch = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    lib.MPIX_Sparse_get_version(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
    return major.value, minor.value, patch.value


if version()[0] != REQUIRED_MAJOR:
    raise ImportError(f"mpix_sparse: {path} is version {'.'.join(map(str, version()))}; this package needs "
                      f"{REQUIRED_MAJOR}.x")


def check(rc):
    """A non-zero return code of the C library as mpi4py's MPI.Exception (Get_error_class and
    Get_error_string then give the library's registered class and message)."""
    if rc != MPI.SUCCESS:
        raise MPI.Exception(rc)


def handle(obj):
    """The C handle of an mpi4py object, as an int for the prototypes above."""
    return MPI._handleof(obj)


def comm_handle(comm):
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"comm must be an mpi4py communicator, not {type(comm).__name__}")
    return MPI._handleof(comm)


def op_handle(op):
    if not isinstance(op, MPI.Op):
        raise TypeError(f"op must be an mpi4py MPI.Op (MPI.SUM, MPI.MAX, ...), not {type(op).__name__}")
    return MPI._handleof(op)
