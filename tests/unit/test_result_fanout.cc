// The node multicast plan: every worker gets every aggregator's results exactly once, either
// straight from the aggregator (its own node) or from the one worker of its node that receives them,
// and an aggregator sends to one worker per other node.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "core/result_fanout.h"

namespace mpix::sparse::detail {
namespace {

void check_plan(const std::vector<int> &workers, const std::vector<int> &aggregators, const std::vector<int> &node) {
    const int ranks = static_cast<int>(node.size());
    std::vector<ResultFanout> f;
    for (int r = 0; r < ranks; ++r)
        f.push_back(plan_result_fanout(workers, aggregators, node, r));
    for (std::size_t a = 0; a < aggregators.size(); ++a) {
        const int agg = aggregators[a];
        const std::vector<int> &direct = f[static_cast<std::size_t>(agg)].direct;
        std::multiset<int> got(direct.begin(), direct.end());
        std::set<int> other_nodes;
        for (int r : direct) {
            if (node[static_cast<std::size_t>(r)] != node[static_cast<std::size_t>(agg)]) {
                EXPECT_TRUE(other_nodes.insert(node[static_cast<std::size_t>(r)]).second)
                    << "aggregator " << a << " sends twice to node " << node[static_cast<std::size_t>(r)];
            }
            for (int peer : f[static_cast<std::size_t>(r)].forward[a]) {
                EXPECT_EQ(node[static_cast<std::size_t>(peer)], node[static_cast<std::size_t>(r)])
                    << "forwarded off the node";
                got.insert(peer);
            }
        }
        // Only receivers forward.
        for (int r = 0; r < ranks; ++r) {
            if (std::find(direct.begin(), direct.end(), r) == direct.end() ||
                node[static_cast<std::size_t>(r)] == node[static_cast<std::size_t>(agg)]) {
                EXPECT_TRUE(f[static_cast<std::size_t>(r)].forward[a].empty()) << "rank " << r << " forwards";
            }
        }
        std::multiset<int> want;
        for (int w : workers)
            if (w != agg) want.insert(w);
        EXPECT_EQ(got, want) << "aggregator " << a << ": not every worker exactly once";
    }
    for (int r = 0; r < ranks; ++r) {
        if (std::find(aggregators.begin(), aggregators.end(), r) == aggregators.end()) {
            EXPECT_TRUE(f[static_cast<std::size_t>(r)].direct.empty());
        }
    }
}

TEST(ResultFanout, OneNodeIsEveryWorkerDirect) {
    const std::vector<int> workers{0, 1, 2, 3}, aggregators{0, 2};
    const ResultFanout f = plan_result_fanout(workers, aggregators, {}, 2);
    EXPECT_EQ(f.direct, (std::vector<int>{0, 1, 3}));
    for (const auto &list : f.forward)
        EXPECT_TRUE(list.empty());
}

TEST(ResultFanout, DedicatedFourNodesOfTwo) {
    // Ranks 0 and 2 aggregate (nodes 0 and 1); workers 1, 3 and nodes 2-3's four.
    const std::vector<int> node{0, 0, 1, 1, 2, 2, 3, 3};
    const std::vector<int> workers{1, 3, 4, 5, 6, 7}, aggregators{0, 2};
    const ResultFanout a0 = plan_result_fanout(workers, aggregators, node, 0);
    EXPECT_EQ(a0.direct, (std::vector<int>{1, 3, 4, 6}));  // its node's worker, one per other node
    // The receivers rotate with the aggregator: node 2 gets aggregator 0's results at 4 and 1's at 5.
    EXPECT_EQ(plan_result_fanout(workers, aggregators, node, 4).forward, (std::vector<std::vector<int>>{{5}, {}}));
    EXPECT_EQ(plan_result_fanout(workers, aggregators, node, 5).forward, (std::vector<std::vector<int>>{{}, {4}}));
    check_plan(workers, aggregators, node);
}

TEST(ResultFanout, RandomGroups) {
    std::mt19937 rng(7);
    for (int i = 0; i < 500; ++i) {
        const int ranks = 1 + static_cast<int>(rng() % 12);
        const int nodes = 1 + static_cast<int>(rng() % 4);
        std::vector<int> node(static_cast<std::size_t>(ranks));
        for (int &n : node)
            n = static_cast<int>(rng() % static_cast<unsigned>(nodes));
        std::vector<int> all(static_cast<std::size_t>(ranks));
        for (int r = 0; r < ranks; ++r)
            all[static_cast<std::size_t>(r)] = r;
        std::shuffle(all.begin(), all.end(), rng);
        const bool dedicated = ranks > 1 && rng() % 2 == 0;
        const int aggregators = 1 + static_cast<int>(rng() % static_cast<unsigned>(dedicated ? ranks - 1 : ranks));
        std::vector<int> agg(all.begin(), all.begin() + aggregators);
        std::vector<int> workers = dedicated ? std::vector<int>(all.begin() + aggregators, all.end()) : all;
        std::sort(workers.begin(), workers.end());
        SCOPED_TRACE("case " + std::to_string(i));
        check_plan(workers, agg, node);
        if (::testing::Test::HasFailure()) break;
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
