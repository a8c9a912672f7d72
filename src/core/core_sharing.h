// Whether ranks of a communicator take turns on cores: some node runs more of its ranks than the
// cores they may run on together. The planner prices what that costs the aggregators' stream.
#pragma once

#include <mpi.h>

namespace mpix::sparse::detail {

// Collective over comm; every rank gets the same answer. A node's cores are the union of its ranks'
// CPU affinity masks, so ranks bound one to a core share none, and unbound ranks on a machine (or
// container cpuset) with fewer cores than ranks do. Where a mask cannot be read the answer is false.
bool ranks_share_cores(MPI_Comm comm);

}  // namespace mpix::sparse::detail
