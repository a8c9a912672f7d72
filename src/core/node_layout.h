// Where a communicator's ranks run: which node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) each is on,
// and whether some node runs more of its ranks than the cores they may run on together. Placement and
// hierarchy follow the nodes; the planner prices what sharing cores costs the aggregators' stream.
#pragma once

#include <mpi.h>

#include <vector>

namespace mpix::sparse::detail {

struct NodeLayout {
    std::vector<int> node_of_rank;  // node index of every rank; nodes numbered by their lowest rank
    bool cores_shared = false;      // some node runs more ranks than it has cores (same on every rank)
};

// Collective over comm (one split, two allreduces on the node, one allgather). A node's cores are
// the union of its ranks' CPU affinity masks, so ranks bound one to a core share none, and unbound
// ranks on a machine (or container cpuset) with fewer cores than ranks do. Where no mask of a node
// can be read, that node counts as not sharing.
NodeLayout learn_node_layout(MPI_Comm comm);

}  // namespace mpix::sparse::detail
