#include "core/placement.h"

#include <algorithm>
#include <map>

namespace mpix::sparse::detail {

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
