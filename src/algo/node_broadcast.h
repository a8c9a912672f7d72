// The last step of hierarchical reduction: the node leader's result to the other ranks of its node.
#pragma once

#include <mpi.h>

#include "core/block_layout.h"

namespace mpix::sparse::detail {

class CommState;

// Collective over node_state's communicator; rank 0 (the leader) holds the result in buf. When the
// result's non-zero blocks are few, only they travel (packed, with their block numbers) and the
// other ranks write zeros around them in one pass; else, or when `dense` says the leader's
// reduction was dense, the whole buffer goes with MPI_Bcast. Returns the bytes each non-leader
// receives, for the stats.
std::uint64_t broadcast_from_leader(CommState &node_state, void *buf, const BlockLayout &layout, MPI_Datatype datatype,
                                    bool dense);

}  // namespace mpix::sparse::detail
