"""Element-sparse allreduce: (index, value) pairs of a vector of `count` elements."""

import ctypes
import operator

import numpy as np
from mpi4py import MPI

from . import _lib
from ._buffers import address, as_array, datatype_of, writable


def _pairs(indices, values):
    """indices as C-contiguous int64 (any integer array-like; copied only when it is not that
    already) and values (a buffer, never copied), both 1-D and of one length."""
    values = as_array(values, "values")
    index_array = np.asarray(indices)
    if index_array.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, not {index_array.dtype}")
    index_array = np.ascontiguousarray(index_array, dtype=np.int64)
    if index_array.ndim != 1 or values.ndim != 1 or index_array.size != values.size:
        raise ValueError(f"indices {index_array.shape} and values {values.shape} must be 1-D of the same length")
    return index_array, values


def allreduce_elements(indices, values, count, op=MPI.SUM, comm=MPI.COMM_WORLD):
    """Each rank passes pairs of a vector of length count (indices in [0, count), any order,
    duplicates combined with op); returns (indices, values): the sorted union of every rank's
    indices (int64) with their reduced values (values' dtype). Collective over comm."""
    index_array, values = _pairs(indices, values)
    datatype = _lib.handle(datatype_of(values.dtype, "values"))
    c_op, c_comm = _lib.op_handle(op), _lib.comm_handle(comm)
    vector = _lib.Vector()
    _lib.check(_lib.lib.MPIX_Sparse_allreduce_elements_sparse(index_array.size, address(index_array), address(values),
                                                              operator.index(count), datatype, c_op, c_comm,
                                                              ctypes.byref(vector)))
    try:
        nnz, index_pointer, value_pointer = _lib.Count(), ctypes.c_void_p(), ctypes.c_void_p()
        _lib.check(_lib.lib.MPIX_Sparse_vector_get(vector, ctypes.byref(nnz), ctypes.byref(index_pointer),
                                                   ctypes.byref(value_pointer)))
        out_indices = np.empty(nnz.value, dtype=np.int64)
        out_values = np.empty(nnz.value, dtype=values.dtype)
        if nnz.value:
            ctypes.memmove(address(out_indices), index_pointer.value, out_indices.nbytes)
            ctypes.memmove(address(out_values), value_pointer.value, out_values.nbytes)
    finally:
        _lib.lib.MPIX_Sparse_vector_free(ctypes.byref(vector))
    return out_indices, out_values


def allreduce_elements_dense(indices, values, count, recv=None, op=MPI.SUM, comm=MPI.COMM_WORLD):
    """Same input as allreduce_elements; the result is dense: recv (count elements of values' dtype,
    allocated when None) holds the reduction of every index, zero where no rank passed one. Returns recv."""
    index_array, values = _pairs(indices, values)
    datatype = datatype_of(values.dtype, "values")
    c_op, c_comm = _lib.op_handle(op), _lib.comm_handle(comm)
    count = operator.index(count)
    if recv is None:
        recv = np.empty(max(count, 0), dtype=values.dtype)
    else:
        recv = writable(recv, "recv")
        if recv.dtype != values.dtype:
            raise TypeError(f"recv has dtype {recv.dtype}, values {values.dtype}: they must match")
        if recv.size != count:
            raise ValueError(f"recv has {recv.size} elements, count is {count}: they must match")
    _lib.check(_lib.lib.MPIX_Sparse_allreduce_elements(index_array.size, address(index_array), address(values),
                                                       address(recv), count, _lib.handle(datatype), c_op, c_comm))
    return recv
