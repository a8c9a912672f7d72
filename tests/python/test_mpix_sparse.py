#!/usr/bin/env python3
"""The Python package against mpi4py's Allreduce and NumPy references, on every rank (run under the
project's launcher on 2 and 4 ranks). Inputs are integer-valued, so float sums are exact in any order
and results compare bit for bit (as tests/mpi/test_allreduce_random.cc does), and identical on every
rank. A plain script: each check runs on every rank, the ranks agree after it, and any failure makes
every rank exit 1. Collective calls come before the asserts of a check, so a failing rank does not
leave the others waiting.
"""

import gc
import os
import sys
import traceback

import numpy as np
from mpi4py import MPI

import mpix_sparse

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
BLOCK = 256  # the library's default block size (elements)


def integer_values(rng, dtype, n):
    """Non-zero integer values in [-8, 8] ([1, 8] for unsigned types)."""
    low = 1 if np.dtype(dtype).kind == "u" else -8
    v = rng.integers(low, 9, size=n)
    v[v == 0] = 1
    return v.astype(dtype)


def block_sparse(dtype, count, density, seed, pattern="random", block=BLOCK):
    """count elements whose blocks are non-zero with probability density; within a non-zero block
    about a quarter of the elements are zero. pattern: random (rank-dependent), identical (same on
    every rank), disjoint (rank r only in blocks r, r + size, ...)."""
    blocks = -(-count // block)
    rng = np.random.default_rng(seed * 7919 + (0 if pattern == "identical" else rank))
    on = rng.random(blocks) < density
    if pattern == "disjoint":
        on &= (np.arange(blocks) % size) == rank
    out = np.zeros(count, dtype=dtype)
    idx = (np.flatnonzero(on)[:, None] * block + np.arange(block)[None, :]).ravel()
    idx = idx[idx < count]
    keep = rng.random(idx.size) < 0.75
    out[idx[keep]] = integer_values(rng, dtype, int(keep.sum()))
    return out


def same_everywhere(array):
    """True when array's bytes are the same on every rank (compared with rank 0's)."""
    ref = comm.bcast(array.tobytes() if rank == 0 else None, root=0)
    return comm.allreduce(int(ref != array.tobytes()), op=MPI.MAX) == 0


def bitwise_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_matches_mpi_allreduce():
    cases = [(np.float64, 1_000_000, 0.01, "random", "SUM"), (np.float32, 1_000_000, 0.01, "disjoint", "SUM"),
             (np.int32, 100_003, 0.01, "random", "SUM"), (np.float32, 262_144, 0.01, "identical", "SUM"),
             (np.float64, 100_003, 0.3, "random", "SUM"), (np.int32, 300_000, 0.01, "random", "BOR"),
             (np.uint32, 300_000, 0.05, "random", "MAX"), (np.float32, 100_000, 0.0, "random", "SUM"),
             (np.float64, 200_000, 0.01, "random", "MIN")]  # MIN: outside the sparse path, dense fallback
    for seed, (dtype, count, density, pattern, op_name) in enumerate(cases, 1):
        op = getattr(MPI, op_name)
        send = block_sparse(dtype, count, density, seed, pattern)
        expected = np.empty_like(send)
        comm.Allreduce(send, expected, op=op)
        got = mpix_sparse.allreduce(send, op=op)
        recv = np.full(count, 7, dtype=dtype)  # a given recv, filled to see every element written
        mpix_sparse.allreduce(send, recv, op=op, comm=comm)
        in_place = send.copy()
        mpix_sparse.allreduce(MPI.IN_PLACE, in_place, op=op)
        everywhere = same_everywhere(got)
        case = f"{np.dtype(dtype).name} count={count} density={density} {pattern} {op_name}"
        assert bitwise_equal(got, expected), f"{case}: differs from Allreduce at {np.flatnonzero(got != expected)[:5]}"
        assert bitwise_equal(recv, expected), f"{case}: recv given"
        assert bitwise_equal(in_place, expected), f"{case}: in place"
        assert everywhere, f"{case}: results differ between ranks"


def check_shapes_and_buffers():
    # Multi-dimensional arrays (reduced as their flat memory) and other buffer-protocol objects.
    send = block_sparse(np.float32, 64 * 4096, 0.02, 21).reshape(4096, 64)
    expected = np.empty_like(send)
    comm.Allreduce(send, expected)
    got = mpix_sparse.allreduce(send)
    raw = bytearray(block_sparse(np.uint8, 4096, 0.5, 22).tobytes())
    raw_expected = bytearray(len(raw))
    comm.Allreduce([raw, MPI.UNSIGNED_CHAR], [raw_expected, MPI.UNSIGNED_CHAR], op=MPI.BOR)
    raw_got = mpix_sparse.allreduce(raw, op=MPI.BOR)
    assert got.shape == (4096, 64) and bitwise_equal(got, expected)
    assert raw_got.tobytes() == bytes(raw_expected)


def check_iallreduce():
    sends = [block_sparse(np.float32, 500_000, 0.01, 30 + i) for i in range(3)]
    requests = [mpix_sparse.iallreduce(s) for s in sends]
    flags = [r.test() for r in requests]  # may or may not be done yet
    results = [r.wait() for r in requests]
    expected = [np.empty_like(s) for s in sends]
    for s, e in zip(sends, expected):
        comm.Allreduce(s, e)
    assert all(isinstance(f, bool) for f in flags)
    assert all(bitwise_equal(r, e) for r, e in zip(results, expected))
    assert all(r.test() for r in requests), "a completed request tests true"


def check_elements():
    count = 2_000_000
    rng = np.random.default_rng(40 + rank)
    nnz = 5000 + 1000 * rank
    indices = rng.integers(0, count, size=nnz)  # duplicates and any order
    indices[:10] = indices[0]  # some certain duplicates
    values = integer_values(rng, np.float64, nnz)
    result = mpix_sparse.allreduce_elements(indices, values, count)
    dense = mpix_sparse.allreduce_elements_dense(indices, values, count)
    values32 = values.astype(np.float32)
    got32 = mpix_sparse.allreduce_elements(indices.astype(np.int32), values32, count)  # int32 indices converted
    everyone = comm.allgather((indices, values))
    all_indices = np.concatenate([i for i, _ in everyone])
    reference = np.zeros(count, dtype=np.float64)
    np.add.at(reference, all_indices, np.concatenate([v for _, v in everyone]))
    union = np.unique(all_indices)
    assert isinstance(result, tuple) and len(result) == 2
    got_indices, got_values = result
    assert got_indices.dtype == np.int64 and got_values.dtype == np.float64
    assert np.array_equal(got_indices, union), "the result holds exactly the union of the indices, sorted"
    assert bitwise_equal(got_values, reference[union])
    assert bitwise_equal(dense, reference)
    assert np.array_equal(got32[0], union) and bitwise_equal(got32[1], reference[union].astype(np.float32))


def check_stats_prove_fewer_bytes():
    mpix_sparse.reset_stats(comm)
    send = block_sparse(np.float32, 1_000_000, 0.01, 50)
    mpix_sparse.allreduce(send)
    s = mpix_sparse.stats(comm)
    assert isinstance(s, mpix_sparse.Stats) and s.calls == 1
    if size > 1:  # one rank has nothing to send: the dense path, zero bytes
        assert s.dense_fallbacks == 0 and s.last_algorithm != mpix_sparse.ALGORITHM_DENSE, s
        # A dense ring allreduce sends 2 (P - 1) / P of the buffer from every rank; at 1% far less.
        assert 0 < s.bytes_sent < 0.1 * send.nbytes, f"{s} against {send.nbytes} dense bytes"
    mpix_sparse.reset_stats(comm)
    assert mpix_sparse.stats(comm).calls == 0


def check_float16():
    # numpy.float16 travels as the library's MPIX_FLOAT16: summed in float32, rounded once, the same
    # on every rank; compared with a float64 sum of every rank's inputs.
    rng = np.random.default_rng(60 + rank)
    send = np.zeros(100_000, dtype=np.float16)
    on = rng.random(send.size // 256) < 0.05
    for k in np.flatnonzero(on):
        send[k * 256:(k + 1) * 256] = rng.uniform(-4, 4, 256).astype(np.float16)
    got = mpix_sparse.allreduce(send)
    assert got.dtype == np.float16
    everyone = np.array(comm.allgather(send), dtype=np.float64)
    exact = everyone.sum(axis=0)
    bound = 2.0 ** -11 * np.abs(exact) + size * 2.0 ** -24 * np.abs(everyone).sum(axis=0) + 2.0 ** -24
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound), "float16 sum outside one rounding of the exact sum"
    first = comm.bcast(got, root=0)
    assert bitwise_equal(got, first), "the same bits on every rank"


def check_profile():
    profiled = mpix_sparse.comm_create(comm, info={"mpix_sparse_profile": "on", "mpix_sparse_algorithm": "aggregator"})
    mpix_sparse.allreduce(block_sparse(np.float32, 1_000_000, 0.01, 51), comm=profiled)
    p = mpix_sparse.profile(profiled)
    mpix_sparse.comm_free(profiled)
    assert p["calls"] == 1, p
    if size > 1:
        assert p["scan"] > 0 and p["stream"] > 0 and p["reduce"] <= p["stream"], p


def check_comm_create_with_info():
    # One non-zero element per 256: with 64-element blocks only a quarter of the bytes travel.
    send = np.zeros(1 << 20, dtype=np.float32)
    send[rank * 7 % 256::256] = 1.0
    keys = {"mpix_sparse_block_size": "64", "mpix_sparse_algorithm": "aggregator", "mpix_sparse_dense_below": "0"}
    small = mpix_sparse.comm_create(comm, info=keys)
    info = MPI.Info.Create()
    info.Set("mpix_sparse_algorithm", "aggregator")
    info.Set("mpix_sparse_dense_below", "0")
    default = mpix_sparse.comm_create(comm, info=info)
    info.Free()
    got_small = mpix_sparse.allreduce(send, comm=small)
    got_default = mpix_sparse.allreduce(send, comm=default)
    s_small, s_default = mpix_sparse.stats(small), mpix_sparse.stats(default)
    profiled = mpix_sparse.profile(small)
    expected = np.empty_like(send)
    comm.Allreduce(send, expected)
    sizes = small.Get_size(), default.Get_size()
    mpix_sparse.comm_free(small)
    mpix_sparse.comm_free(default)
    assert bitwise_equal(got_small, expected) and bitwise_equal(got_default, expected)
    assert sizes == (size, size) and isinstance(small, MPI.Intracomm)
    assert small == MPI.COMM_NULL and default == MPI.COMM_NULL, "comm_free sets the communicator to MPI.COMM_NULL"
    assert profiled["calls"] == 0 and profiled["stream"] == 0.0, "profiling is off unless asked for"
    if size > 1:
        assert s_small.last_algorithm == mpix_sparse.ALGORITHM_AGGREGATOR, s_small
        assert s_small.bytes_sent < 0.5 * s_default.bytes_sent, f"block size 64: {s_small}; 256: {s_default}"


def check_dedicated_aggregator():
    # Rank 0 serves inside comm_create and gets MPI.COMM_NULL once the workers freed theirs.
    if size < 2:
        return
    workers = mpix_sparse.comm_create(comm, info={"mpix_sparse_aggregator_mode": "dedicated",
                                                  "mpix_sparse_aggregators": "1", "mpix_sparse_placement": "packed",
                                                  "mpix_sparse_algorithm": "aggregator"})
    aggregator = workers == MPI.COMM_NULL
    total = worker_size = None
    if not aggregator:
        worker_size = workers.Get_size()
        send = np.zeros(300_000, dtype=np.float32)
        send[256 * rank::4096] = 1.0
        total = mpix_sparse.allreduce(send, comm=workers)
        mpix_sparse.comm_free(workers)
    roles = comm.allgather(aggregator)
    assert roles == [True] + [False] * (size - 1), roles
    if not aggregator:
        assert worker_size == size - 1 and workers == MPI.COMM_NULL
        expected = np.zeros_like(total)
        for r in range(1, size):
            expected[256 * r::4096] += 1.0
        assert bitwise_equal(total, expected)


def check_shared_arrays():
    # Arrays from MPIX_Sparse_alloc_mem: ordinary NumPy arrays whose payloads the ranks of this machine
    # read in place (all ranks of these tests share one), with MPI_Allreduce's result bit for bit.
    send = mpix_sparse.empty((1024, 1024), np.float32)
    assert send.shape == (1024, 1024) and send.dtype == np.float32 and send.flags.c_contiguous
    assert send.flags.writeable
    send[...] = block_sparse(np.float32, send.size, 0.5, 80).reshape(send.shape)
    recv = mpix_sparse.zeros(send.shape)
    assert not recv.any()
    reference = np.empty_like(send)
    comm.Allreduce(send, reference, op=MPI.SUM)
    forced = mpix_sparse.comm_create(comm, {"mpix_sparse_algorithm": "aggregator"})
    assert mpix_sparse.allreduce(send, recv, comm=forced) is recv and bitwise_equal(recv, reference)
    s = mpix_sparse.stats(forced)
    mpix_sparse.comm_free(forced)
    assert s.last_algorithm == mpix_sparse.ALGORITHM_AGGREGATOR and (size == 1 or s.bytes_in_place > 0), s
    assert mpix_sparse.stats(comm).bytes_in_place == 0  # heap buffers on comm so far
    # A view keeps the memory alive after the array it came from is gone; the last one frees it.
    view = recv[512:]
    del recv
    gc.collect()
    assert bitwise_equal(view, reference[512:])
    del view, send
    for n in (0, 1, 1000, 1 << 20):  # small ones are ordinary memory, large ones shared
        a = mpix_sparse.zeros(n, np.float64)
        assert a.size == n and not a.any()
    del a
    gc.collect()
    # Each large allocation holds a descriptor (its memfd) until freed: none is left once the arrays
    # are gone, so the last view's finalizer did free them.
    fds = len(os.listdir("/proc/self/fd"))
    arrays = [mpix_sparse.empty(1 << 18, np.float32) for _ in range(8)]
    assert len(os.listdir("/proc/self/fd")) >= fds + 8
    del arrays
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds
    expect(ValueError, mpix_sparse.empty, (-1, 4))
    expect(TypeError, mpix_sparse.empty, 4, object)


def expect(exception, function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except exception as e:
        return e
    raise AssertionError(f"{function.__name__}{args}: no {exception.__name__}")


def check_bad_input_is_rejected_before_the_call():
    a = np.zeros(1000, dtype=np.float32)
    strided = np.zeros(2000, dtype=np.float32)[::2]
    readonly = np.zeros(1000, dtype=np.float32)
    readonly.flags.writeable = False
    expect(ValueError, mpix_sparse.allreduce, a, strided)  # non-contiguous recv
    expect(ValueError, mpix_sparse.allreduce, strided)  # non-contiguous send
    expect(TypeError, mpix_sparse.allreduce, a, np.zeros(1000, dtype=np.float64))  # mismatched dtype
    expect(ValueError, mpix_sparse.allreduce, a, np.zeros(999, dtype=np.float32))  # mismatched size
    expect(ValueError, mpix_sparse.allreduce, a, readonly)
    expect(ValueError, mpix_sparse.allreduce, a, a)  # overlap: IN_PLACE is the way
    expect(ValueError, mpix_sparse.allreduce, MPI.IN_PLACE)  # in place without recv
    expect(TypeError, mpix_sparse.allreduce, [1.0, 2.0])  # not a buffer
    expect(TypeError, mpix_sparse.allreduce, np.zeros(4, dtype=object))
    expect(TypeError, mpix_sparse.allreduce, a, op="sum")
    expect(TypeError, mpix_sparse.allreduce, a, comm=0)
    expect(ValueError, mpix_sparse.allreduce_elements, [1, 2], np.ones(3), 10)  # lengths differ
    expect(TypeError, mpix_sparse.allreduce_elements, np.array([1.5]), np.ones(1), 10)  # float indices
    expect(TypeError, mpix_sparse.allreduce_elements_dense, [1], np.ones(1), 10, np.zeros(10, np.float32))
    expect(TypeError, mpix_sparse.comm_create, comm, info=["mpix_sparse_block_size"])
    expect(ValueError, mpix_sparse.error_class, "nonsense")


def check_library_errors_raise_mpi_exception():
    # One rank passes an index out of range: it gets the argument class, the others the remote class.
    indices = np.array([10 if rank == 0 else 3], dtype=np.int64)
    try:
        mpix_sparse.allreduce_elements(indices, np.ones(1), 10)
        first = None
    except MPI.Exception as e:
        first = e
    # A bad info value on every rank: each gets the info class, with a message naming the key.
    try:
        mpix_sparse.comm_create(comm, info={"mpix_sparse_block_size": "zero"})
        second = None
    except MPI.Exception as e:
        second = e
    after = mpix_sparse.allreduce(np.ones(10, dtype=np.int32))  # the communicator keeps working
    want = mpix_sparse.error_class("ARG" if rank == 0 else "REMOTE") if size > 1 else mpix_sparse.error_class("ARG")
    assert first is not None, "no MPI.Exception for an index out of range"
    assert first.Get_error_class() == want, (first.Get_error_class(), want, first.Get_error_string())
    assert rank != 0 or "index" in first.Get_error_string(), first.Get_error_string()
    assert second is not None and second.Get_error_class() == mpix_sparse.error_class("INFO")
    assert "mpix_sparse_block_size" in second.Get_error_string(), second.Get_error_string()
    assert np.all(after == size)


def check_version():
    assert mpix_sparse.get_version() == (0, 2, 0) and mpix_sparse.__version__ == "0.2.0"


CHECKS = [check_version, check_matches_mpi_allreduce, check_shapes_and_buffers, check_iallreduce, check_elements,
          check_stats_prove_fewer_bytes, check_shared_arrays, check_profile, check_float16, check_comm_create_with_info, check_dedicated_aggregator,
          check_bad_input_is_rejected_before_the_call,
          check_library_errors_raise_mpi_exception]


def main():
    passed = 0
    for check in CHECKS:
        try:
            check()
            failed = 0
        except Exception:  # noqa: BLE001 - any failure, reported with its rank
            failed = 1
            sys.stdout.write(f"[rank {rank}] FAILED {check.__name__}\n{traceback.format_exc()}")
            sys.stdout.flush()
        if comm.allreduce(failed, op=MPI.MAX):
            if rank == 0:
                print(f"python tests: {check.__name__} failed (on {size} ranks)", flush=True)
            return 1
        passed += 1
        if rank == 0:
            print(f"ok {check.__name__}", flush=True)
    if rank == 0:
        print(f"python tests: all {passed} checks passed on {size} ranks ({mpix_sparse.library_path})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
