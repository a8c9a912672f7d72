"""Configured communicators, per-communicator statistics, and the library's error classes."""

import ctypes
from dataclasses import dataclass

from mpi4py import MPI

from . import _lib

ALGORITHM_DENSE, ALGORITHM_AGGREGATOR, ALGORITHM_ALLGATHER = 0, 1, 2
_ALGORITHM_NAMES = {ALGORITHM_DENSE: "dense", ALGORITHM_AGGREGATOR: "aggregator", ALGORITHM_ALLGATHER: "allgather"}


def comm_create(comm=MPI.COMM_WORLD, info=None):
    """A new communicator configured by info (an MPI.Info, or a dict of mpix_sparse_* keys to values,
    e.g. {"mpix_sparse_block_size": "64"}); collective over comm. Free it with comm_free. In dedicated
    aggregator mode the aggregator ranks serve inside this call and get MPI.COMM_NULL."""
    c_comm = _lib.comm_handle(comm)
    owned = None
    if info is None:
        info = MPI.INFO_NULL
    elif isinstance(info, dict):
        owned = MPI.Info.Create()
        for key, value in info.items():
            owned.Set(str(key), str(value))
        info = owned
    elif not isinstance(info, MPI.Info):
        raise TypeError(f"info must be an MPI.Info or a dict, not {type(info).__name__}")
    newcomm = MPI.Intracomm()  # MPI_COMM_NULL; the library writes the new handle into it
    try:
        _lib.check(_lib.lib.MPIX_Sparse_comm_create(c_comm, _lib.handle(info), MPI._addressof(newcomm)))
    finally:
        if owned is not None:
            owned.Free()
    return newcomm


def comm_free(comm):
    """Frees a communicator made by comm_create (collective); comm becomes MPI.COMM_NULL."""
    _lib.comm_handle(comm)
    _lib.check(_lib.lib.MPIX_Sparse_comm_free(MPI._addressof(comm)))


@dataclass(frozen=True)
class Stats:
    """Counters of this rank on a communicator (MPIX_Sparse_stats)."""

    calls: int  # collective calls on this communicator
    bytes_sent: int  # payload + header bytes this rank handed to the transport
    bytes_received: int
    dense_fallbacks: int  # calls served by the dense path (MPI_Allreduce)
    last_algorithm: int  # ALGORITHM_* of the last call
    bytes_in_place: int = 0  # payload bytes peers read where they were (arrays from mpix_sparse.empty)

    @property
    def last_algorithm_name(self):
        return _ALGORITHM_NAMES.get(self.last_algorithm, str(self.last_algorithm))


def stats(comm=MPI.COMM_WORLD):
    """This rank's counters on comm (local, not collective)."""
    s = _lib.Stats()
    in_place = _lib.Count()
    _lib.check(_lib.lib.MPIX_Sparse_stats_get(_lib.comm_handle(comm), ctypes.byref(s)))
    _lib.check(_lib.lib.MPIX_Sparse_stats_in_place(_lib.comm_handle(comm), ctypes.byref(in_place)))
    return Stats(s.calls, s.bytes_sent, s.bytes_received, s.dense_fallbacks, s.last_algorithm, in_place.value)


def reset_stats(comm=MPI.COMM_WORLD):
    """Zeroes this rank's counters and profile on comm (local)."""
    _lib.check(_lib.lib.MPIX_Sparse_stats_reset(_lib.comm_handle(comm)))


def profile(comm=MPI.COMM_WORLD):
    """Seconds this rank spent in each phase of its calls on comm (MPIX_Sparse_profile), as a dict with
    "calls" and the phases; all zero unless profiling is on (info key or MPIX_SPARSE_PROFILE=on)."""
    p = _lib.Profile()
    _lib.check(_lib.lib.MPIX_Sparse_profile_get(_lib.comm_handle(comm), ctypes.byref(p)))
    return {"calls": p.calls, **{phase: getattr(p, phase) for phase in _lib.PROFILE_PHASES}}


_ERROR_KINDS = ("ARG", "COMM", "INFO", "REMOTE", "TRANSPORT", "PROTOCOL", "INTERN", "TIMEOUT")


def error_class(kind):
    """The MPI error class of one kind of library error ("ARG", "COMM", "INFO", "REMOTE", "TRANSPORT",
    "PROTOCOL", "INTERN", "TIMEOUT"), to compare with MPI.Exception.Get_error_class()."""
    try:
        index = _ERROR_KINDS.index(kind.upper())
    except ValueError:
        raise ValueError(f"unknown error kind {kind!r}; one of {', '.join(_ERROR_KINDS)}") from None
    return _lib.lib.MPIX_Sparse_error_class(index)
