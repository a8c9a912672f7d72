// MPIX_Sparse_allreduce below the API, as an operation: scan, agree, plan, then the dense, allgather
// or aggregator algorithm; or, on communicators with node and leader levels, the same inside each
// node, across the node leaders, and the leader's result back to its node.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "core/memory_kind.h"
#include "core/operation.h"

namespace mpix::sparse::detail {

class CommState;

// Where the two buffers live (sendbuf's kind is ignored for MPI_IN_PLACE).
struct BufferKinds {
    MemoryKind send = MemoryKind::Host;
    MemoryKind recv = MemoryKind::Host;
    bool any_device() const { return on_device(send) || on_device(recv); }
};

// Arguments were validated by the API. sendbuf may be MPI_IN_PLACE. The operation is not started.
// `local_failure` makes this rank report a failure in the agreement (its peers then fail too).
// `blocking`: the caller waits for it at once (MPIX_Sparse_allreduce), every rank alike; its dense
// path may then be MPI's blocking MPI_Allreduce (BlockAllreduce::start_dense says when).
std::unique_ptr<Operation> make_block_allreduce(CommState &state, const void *sendbuf, void *recvbuf,
                                                std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                                                BufferKinds kinds = {}, bool local_failure = false,
                                                bool blocking = false);

// A retired operation of make_block_allreduce, offered for another call (CommState keeps one per
// communicator: see CommState::take_spare_operation): true when it takes these arguments, which it
// is then bound to (buffers and handles). It takes the same count, element type, reduction, buffer
// kinds, in-place choice and blocking flag as it was made with: everything sized from those (the
// stream's roles and kernels, the scratch) stays valid, and the rest is set at each start, as for a
// persistent request. Engine lock held.
bool rebind_block_allreduce(Operation &operation, const void *sendbuf, void *recvbuf, std::uint64_t count,
                            MPI_Datatype datatype, MPI_Op op, BufferKinds kinds, bool blocking);

// A blocking call on host buffers that goes dense, made at once with MPI_Allreduce when nothing is
// in line on `state` (the same MPI collective, in the same order, as its operation would make after
// waiting its turn): no request, no operation, no progress loop. False when it must take the line
// (something is in line, the data must be looked at, profiling is on, the dense path is not the
// blocking call (CommState::blocking_dense: a timeout, several nodes), the communicator is broken). Call without the
// engine lock; throws Error(MpiFailure) when MPI fails.
bool blocking_dense_at_once(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count,
                            MPI_Datatype datatype, MPI_Op op);

}  // namespace mpix::sparse::detail
