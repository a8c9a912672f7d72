// The dense path: MPI_Allreduce on the communicator's private duplicate. Serves every type and op,
// tiny messages, and unions too dense for sparsity to pay off.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace mpix::sparse::detail {

class CommState;

// sendbuf may be MPI_IN_PLACE. Counts above INT_MAX travel in chunks of a contiguous type.
void dense_allreduce(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                     MPI_Op op);

}  // namespace mpix::sparse::detail
