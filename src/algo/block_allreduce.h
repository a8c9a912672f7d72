// MPIX_Sparse_allreduce below the API: scan, agree, plan, then the dense, allgather or aggregator
// algorithm.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace mpix::sparse::detail {

class CommState;

// Arguments were validated by the API. sendbuf may be MPI_IN_PLACE.
void block_allreduce(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                     MPI_Op op);

}  // namespace mpix::sparse::detail
