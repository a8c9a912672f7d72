"""Buffers: any C-contiguous object with the buffer protocol, seen as a NumPy array without a copy,
and the MPI datatype of its element type. Every check raises before the C library is called."""

import numpy as np
from mpi4py import MPI

from . import _lib


def as_array(obj, name):
    """A NumPy view of obj's memory (never a copy)."""
    if isinstance(obj, np.ndarray):
        array = obj
    else:
        try:
            view = memoryview(obj)
        except TypeError:
            raise TypeError(f"{name} must support the buffer protocol (a NumPy array, bytearray, array.array; "
                            f"for a CPU torch tensor pass tensor.numpy()), not {type(obj).__name__}") from None
        array = np.asarray(view)
    if not array.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous (use numpy.ascontiguousarray, or pass a contiguous recv)")
    return array


def writable(obj, name):
    array = as_array(obj, name)
    if not array.flags.writeable:
        raise ValueError(f"{name} is read-only")
    return array


def datatype_of(dtype, name):
    """The MPI datatype of a NumPy scalar dtype: MPI's predefined one (float32 is MPI_FLOAT, int64
    MPI_LONG, ...), or the library's MPIX_FLOAT16 for float16."""
    if dtype.fields is not None or dtype.subdtype is not None:
        raise TypeError(f"{name}: structured or subarray dtype {dtype} is not supported")
    if not dtype.isnative:
        raise TypeError(f"{name}: dtype {dtype} is not in native byte order")
    if dtype == np.float16:
        return _lib.float16_datatype()  # MPI has no 16-bit float: the library's MPIX_FLOAT16
    datatype = MPI._typedict.get(dtype.char)
    if datatype is None:
        raise TypeError(f"{name}: no MPI datatype for dtype {dtype}")
    return datatype


def address(array):
    return array.ctypes.data
