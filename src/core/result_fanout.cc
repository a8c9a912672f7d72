#include "core/result_fanout.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "core/error.h"
#include "core/group.h"

namespace mpix::sparse::detail {

ResultFanout plan_result_fanout(const std::vector<int> &workers, const std::vector<int> &aggregators,
                                const std::vector<int> &node, int me) {
    ResultFanout f;
    f.forward.resize(aggregators.size());
    auto node_of = [&](int r) { return node.empty() ? 0 : node[static_cast<std::size_t>(r)]; };
    // Workers by node, each node's in worker order (the order every rank sees alike).
    std::vector<std::pair<int, int>> by_node;  // (node, worker's group rank)
    by_node.reserve(workers.size());
    for (int r : workers)
        by_node.emplace_back(node_of(r), r);
    std::stable_sort(by_node.begin(), by_node.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    for (std::size_t a = 0; a < aggregators.size(); ++a) {
        const int aggregator = aggregators[a];
        const int home = node_of(aggregator);
        for (std::size_t i = 0; i < by_node.size();) {
            std::size_t j = i;
            while (j < by_node.size() && by_node[j].first == by_node[i].first)
                ++j;
            if (by_node[i].first == home) {
                for (std::size_t k = i; k < j; ++k)
                    if (aggregator == me && by_node[k].second != me) f.direct.push_back(by_node[k].second);
            } else {
                const int receiver = by_node[i + a % (j - i)].second;
                if (aggregator == me) f.direct.push_back(receiver);
                if (receiver == me)
                    for (std::size_t k = i; k < j; ++k)
                        if (by_node[k].second != me) f.forward[a].push_back(by_node[k].second);
            }
            i = j;
        }
    }
    return f;
}

namespace {

// The node map the fanout uses: `node`, or with node multicast off, none (everyone direct).
std::vector<int> fanout_nodes(const std::vector<int> &node, bool multicast) {
    static const int fake_per_node = [] {
        const char *k = std::getenv("MPIX_SPARSE_TEST_RANKS_PER_NODE");
        return k == nullptr ? 0 : std::atoi(k);
    }();
    if (!multicast) return {};
    if (fake_per_node <= 0) return node;
    std::vector<int> fake(node.size());
    for (std::size_t r = 0; r < fake.size(); ++r)
        fake[r] = static_cast<int>(r) / fake_per_node;
    return fake;
}

}  // namespace

bool plan_node_multicast(Group &group, const std::vector<int> &node, bool wanted, MPI_Comm comm) {
    int on = wanted ? 1 : 0;
    const int rc = PMPI_Allreduce(MPI_IN_PLACE, &on, 1, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allreduce");
    group.fanout = plan_result_fanout(group.workers, group.aggregators, fanout_nodes(node, on != 0), group.rank);
    return on != 0;
}

}  // namespace mpix::sparse::detail
