// Who receives an aggregator's results from it, and who passes them on within a node. Sending the
// union to every worker makes an aggregator's link carry one copy per worker; with node multicast it
// sends one copy per other node, to one worker there (the node's receiver for that aggregator,
// rotating over the node's workers so that forwarding work spreads), which forwards it to the node's
// other workers through shared memory (by reference where the transport shares it: one copy in
// memory for the whole node). Workers of the aggregator's own node get it straight from it.
#pragma once

#include <mpi.h>

#include <vector>

namespace mpix::sparse::detail {

struct Group;

// The fanout as seen by one rank (`me`, a group rank). Group ranks everywhere.
struct ResultFanout {
    std::vector<int> direct;                // as an aggregator: the workers it sends its results to
    std::vector<std::vector<int>> forward;  // as a worker, by aggregator index: whom it forwards them to
};

// `node[r]` is the node index (0 .. nodes-1) of group rank r; empty: all on one node (everyone gets
// results straight from the aggregators, as without multicast).
ResultFanout plan_result_fanout(const std::vector<int> &workers, const std::vector<int> &aggregators,
                                const std::vector<int> &node, int me);

// Node multicast on a communicator only where every rank of `comm` asked for it (collective: ranks
// with different settings would plan different fanouts, and a worker would wait for results nobody
// forwards); plans group.fanout for that setting from the node map (`node`, of group ranks) and
// returns the setting agreed. Tests on one machine fake nodes of k consecutive ranks with
// MPIX_SPARSE_TEST_RANKS_PER_NODE=k (the fanout only: placement, hierarchy and the planner still see
// the real machine).
bool plan_node_multicast(Group &group, const std::vector<int> &node, bool wanted, MPI_Comm comm);

}  // namespace mpix::sparse::detail
