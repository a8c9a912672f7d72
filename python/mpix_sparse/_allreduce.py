"""Block-sparse allreduce on dense buffers: blocking and non-blocking."""

import ctypes
import warnings

import numpy as np
from mpi4py import MPI

from . import _lib
from ._buffers import address, as_array, datatype_of, writable

_IN_PLACE = ctypes.c_void_p(int(MPI.IN_PLACE)).value  # the C value of MPI_IN_PLACE in this MPI


def _arguments(send, recv, op, comm):
    """The C arguments (send, recv, count, datatype, op, comm) after every check; recv is an array,
    allocated when None."""
    handles = _lib.op_handle(op), _lib.comm_handle(comm)
    if send is MPI.IN_PLACE:
        if recv is None:
            raise ValueError("send=MPI.IN_PLACE needs recv (the buffer reduced in place)")
        recv = writable(recv, "recv")
        return (_IN_PLACE, recv, recv.size, _lib.handle(datatype_of(recv.dtype, "recv"))) + handles
    send = as_array(send, "send")
    datatype = datatype_of(send.dtype, "send")
    if recv is None:
        recv = np.empty_like(send)
    else:
        recv = writable(recv, "recv")
        if recv.dtype != send.dtype:
            raise TypeError(f"recv has dtype {recv.dtype}, send {send.dtype}: they must match")
        if recv.size != send.size:
            raise ValueError(f"recv has {recv.size} elements, send {send.size}: they must match")
        if send.size and np.may_share_memory(send, recv):
            raise ValueError("send and recv overlap: pass send=MPI.IN_PLACE to reduce recv in place")
    return (address(send), recv, send.size, _lib.handle(datatype)) + handles


def allreduce(send, recv=None, op=MPI.SUM, comm=MPI.COMM_WORLD):
    """MPI_Allreduce's contract on dense buffers; blocks that are all zero on a rank are not sent.

    send: a C-contiguous buffer (NumPy array, any shape), or MPI.IN_PLACE to reduce recv in place.
    recv: a writable C-contiguous buffer of send's size and dtype; allocated (numpy.empty_like(send))
    when None. Returns recv. Collective over comm; nothing is copied."""
    sendbuf, recv, count, datatype, c_op, c_comm = _arguments(send, recv, op, comm)
    _lib.check(_lib.lib.MPIX_Sparse_allreduce(sendbuf, address(recv), count, datatype, c_op, c_comm))
    return recv


class Request:
    """A non-blocking allreduce in flight. It keeps its buffers referenced until it completes; don't
    touch them before wait() returns or test() returns True."""

    def __init__(self, buffers, recv):
        self._handle = _lib.Request()
        self._buffers = buffers
        self.recv = recv

    def wait(self):
        """Completes the operation (collective progress) and returns recv."""
        try:
            _lib.check(_lib.lib.MPIX_Sparse_wait(ctypes.byref(self._handle)))
        finally:
            if not self._handle.value:
                self._buffers = None
        return self.recv

    def test(self):
        """True once the operation completed (its error, if any, is raised then)."""
        flag = ctypes.c_int()
        try:
            _lib.check(_lib.lib.MPIX_Sparse_test(ctypes.byref(self._handle), ctypes.byref(flag)))
        finally:
            if not self._handle.value:
                self._buffers = None
        return bool(flag.value)

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            _orphans.append(self._buffers)  # the library may still write into them
            warnings.warn("mpix_sparse.Request dropped while active: its buffers are kept alive; call wait()",
                          ResourceWarning, stacklevel=2)


_orphans = []


def iallreduce(send, recv=None, op=MPI.SUM, comm=MPI.COMM_WORLD):
    """Non-blocking allreduce (same arguments as allreduce); returns a Request whose wait() returns recv.
    Requests on one communicator must be started in the same order on every rank."""
    sendbuf, recv, count, datatype, c_op, c_comm = _arguments(send, recv, op, comm)
    request = Request((send, recv), recv)
    _lib.check(_lib.lib.MPIX_Sparse_iallreduce(sendbuf, address(recv), count, datatype, c_op, c_comm,
                                               ctypes.byref(request._handle)))
    return request
