"""mpix_sparse: sparse allreduce for MPI programs, for mpi4py communicators and NumPy buffers.

    from mpi4py import MPI
    import numpy as np, mpix_sparse
    grad = np.zeros(1 << 20, dtype=np.float32); grad[4096:4352] = 1.0
    total = mpix_sparse.allreduce(grad)              # MPI_Allreduce's result; zero blocks not sent
    print(mpix_sparse.stats(MPI.COMM_WORLD).bytes_sent)
    grad = mpix_sparse.zeros(1 << 20)                # memory the ranks of a machine read in place

Errors of the C library raise mpi4py's MPI.Exception (compare Get_error_class() with
mpix_sparse.error_class("ARG"), ...); bad Python arguments raise TypeError/ValueError before any call.
The C library (libmpix_sparse) is loaded with ctypes: see _lib.py for where it is looked for.
"""

from ._lib import version as _version
from ._allreduce import Request, allreduce, iallreduce
from ._comm import (ALGORITHM_AGGREGATOR, ALGORITHM_ALLGATHER, ALGORITHM_DENSE, Stats, comm_create, comm_free,
                    error_class, profile, reset_stats, stats)
from ._elements import allreduce_elements, allreduce_elements_dense
from ._memory import empty, zeros
from ._lib import path as library_path

__version__ = "0.2.0"


def get_version():
    """(major, minor, patch) of the C library actually loaded."""
    return _version()


__all__ = ["allreduce", "iallreduce", "Request", "allreduce_elements", "allreduce_elements_dense", "comm_create",
           "comm_free", "empty", "zeros", "stats", "reset_stats", "profile", "Stats", "error_class", "get_version", "library_path",
           "ALGORITHM_DENSE", "ALGORITHM_AGGREGATOR", "ALGORITHM_ALLGATHER"]
