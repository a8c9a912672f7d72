#include "core/placement.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace mpix::sparse::detail {

std::vector<int> node_of_ranks(MPI_Comm comm) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node_comm = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_split_type");
    // The node's lowest rank in comm names the node.
    int leader = rank;
    rc = PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node_comm);
    MPI_Comm_free(&node_comm);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
    std::vector<int> leaders(static_cast<std::size_t>(size));
    rc = MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allgather");
    std::map<int, int> index;
    for (int l : leaders)
        index.emplace(l, 0);
    int n = 0;
    for (auto &[l, i] : index)
        i = n++;
    std::vector<int> node(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r)
        node[static_cast<std::size_t>(r)] = index[leaders[static_cast<std::size_t>(r)]];
    return node;
}

std::vector<int> choose_aggregators(const std::vector<int> &node, int count, Placement placement) {
    const int size = static_cast<int>(node.size());
    std::vector<int> chosen;
    if (placement == Placement::Packed) {
        for (int r = 0; r < count && r < size; ++r)
            chosen.push_back(r);
        return chosen;
    }
    // Spread: order ranks by (position within their node, node), then take the first `count`.
    std::map<int, int> seen_on_node;
    std::vector<std::pair<std::pair<int, int>, int>> order;
    for (int r = 0; r < size; ++r) {
        const int n = node[static_cast<std::size_t>(r)];
        order.push_back({{seen_on_node[n]++, n}, r});
    }
    std::sort(order.begin(), order.end());
    for (int i = 0; i < count && i < size; ++i)
        chosen.push_back(order[static_cast<std::size_t>(i)].second);
    // Shards follow rank order, so neighbouring blocks are not all on one node by accident of order.
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

}  // namespace mpix::sparse::detail
