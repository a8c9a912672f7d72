"""Arrays in memory from MPIX_Sparse_alloc_mem, which the ranks of one machine read in place: an
allreduce between such arrays moves payloads by reference instead of copying them through shared
memory (docs/architecture.md, "Buffers the peers read in place")."""

import ctypes
import math
import weakref

import numpy as np
from mpi4py import MPI

from . import _lib


def empty(shape, dtype=np.float32):
    """A new C-contiguous NumPy array of shape and dtype, uninitialized, in memory from
    MPIX_Sparse_alloc_mem (local, not collective). Pass it as send or recv buffer like any other; the
    memory is freed (MPIX_Sparse_free_mem) when the array and every view of it are gone. For PyTorch:
    torch.from_numpy(array) shares it."""
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise TypeError(f"dtype {dtype} holds Python objects: not in raw memory")
    shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if any(n < 0 for n in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    nbytes = math.prod(shape) * dtype.itemsize
    base = ctypes.c_void_p()
    _lib.check(_lib.lib.MPIX_Sparse_alloc_mem(nbytes, _lib.handle(MPI.INFO_NULL), ctypes.byref(base)))
    address = base.value
    # The ctypes array owns the allocation: NumPy keeps it alive as the base of every view.
    memory = (ctypes.c_char * max(nbytes, 1)).from_address(address)
    weakref.finalize(memory, _lib.lib.MPIX_Sparse_free_mem, ctypes.c_void_p(address))
    return np.frombuffer(memory, dtype=dtype, count=math.prod(shape)).reshape(shape)


def zeros(shape, dtype=np.float32):
    """empty(shape, dtype) filled with zeros."""
    array = empty(shape, dtype)
    array.fill(0)
    return array
