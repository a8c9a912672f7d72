// Where aggregators go, given each rank's node (core/node_layout.h): "spread"
// takes one rank per node before a second on any node (aggregation work and NIC bandwidth spread over
// nodes); "packed" takes the lowest ranks.
#pragma once

#include <vector>

#include "core/config.h"

namespace mpix::sparse::detail {

// The ranks (sorted by shard order) of `count` aggregators among the ranks in `node` order.
std::vector<int> choose_aggregators(const std::vector<int> &node, int count, Placement placement);

}  // namespace mpix::sparse::detail
