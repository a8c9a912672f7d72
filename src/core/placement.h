// Where aggregators go. Nodes are told apart by MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): "spread"
// takes one rank per node before a second on any node (aggregation work and NIC bandwidth spread over
// nodes); "packed" takes the lowest ranks.
#pragma once

#include <mpi.h>

#include <vector>

#include "core/config.h"

namespace mpix::sparse::detail {

// Node index of every rank of comm (collective). Nodes are numbered by their lowest rank.
std::vector<int> node_of_ranks(MPI_Comm comm);

// The ranks (sorted by shard order) of `count` aggregators among the ranks in `node` order.
std::vector<int> choose_aggregators(const std::vector<int> &node, int count, Placement placement);

}  // namespace mpix::sparse::detail
