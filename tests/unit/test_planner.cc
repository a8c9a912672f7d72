// The planner: union estimates, cost model choices, and shards that balance non-zero work.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/planner.h"

namespace mpix::sparse::detail {
namespace {

Demand demand(std::uint64_t blocks, int workers, int aggregators, double density) {
    Demand d;
    d.workers = workers;
    d.aggregators = aggregators;
    d.layout = BlockLayout{blocks * 256, 256, 4};
    const std::size_t bins = histogram_bins(aggregators);
    d.bin_width = bin_width(blocks, bins);
    const auto per_bin = static_cast<std::int64_t>(density * static_cast<double>(d.bin_width));
    d.bins.assign(bins, SumMax{per_bin * workers, per_bin});
    d.nonzero_max = static_cast<std::uint64_t>(density * static_cast<double>(blocks));
    d.nonzero_sum = d.nonzero_max * static_cast<std::uint64_t>(workers);
    return d;
}

TEST(Planner, UnionEstimateBetweenMaxAndSum) {
    EXPECT_DOUBLE_EQ(estimated_union(SumMax{0, 0}, 100), 0.0);
    const double u = estimated_union(SumMax{40, 10}, 1000);
    EXPECT_GE(u, 10.0);
    EXPECT_LE(u, 40.0);
    EXPECT_LE(estimated_union(SumMax{5000, 1000}, 1000), 1000.0) << "never more than the bin";
}

TEST(Planner, SparseWinsAtLowDensityDenseAtFullDensityForCheapDense) {
    Config config;
    config.cost.dense_table = {{1, 0.5}};  // a fast dense allreduce
    config.cost.sparse_beta_ns = 1.0;
    const Plan sparse = make_plan(demand(65536, 4, 4, 0.01), config);
    EXPECT_NE(sparse.algorithm, Algorithm::Dense);
    const Plan dense = make_plan(demand(65536, 4, 4, 1.0), config);
    EXPECT_EQ(dense.algorithm, Algorithm::Dense);
    EXPECT_GT(dense.cost.aggregator_us, dense.cost.dense_us);
}

TEST(Planner, DenseCostGrowsOutOfCache) {
    // MPI's per-byte cost rises as buffers outgrow the cache (the default table); interpolation
    // between table points is in log size and clamps at the ends.
    CostParams t;
    t.dense_table = {{1, 1.0}, {4, 2.0}};
    EXPECT_DOUBLE_EQ(dense_ns_per_byte(t, 0.5 * 1048576), 1.0);
    EXPECT_DOUBLE_EQ(dense_ns_per_byte(t, 2.0 * 1048576), 1.5);
    EXPECT_DOUBLE_EQ(dense_ns_per_byte(t, 64.0 * 1048576), 2.0);
    CostParams c;
    const Demand small = demand(1024, 4, 4, 1.0);   // 1 MiB
    const Demand large = demand(65536, 4, 4, 1.0);  // 64 MiB
    const double per_byte_small = estimate_costs(small, c).dense_us / static_cast<double>(small.layout.total_bytes());
    const double per_byte_large = estimate_costs(large, c).dense_us / static_cast<double>(large.layout.total_bytes());
    EXPECT_LT(per_byte_small, per_byte_large);
}

TEST(Planner, SparseMustBeatDenseByTheMargin) {
    Config config;
    Demand d = demand(65536, 4, 4, 0.3);
    const CostEstimate e = estimate_costs(d, config.cost);
    const double best_sparse = std::min(e.aggregator_us, e.allgather_us);
    config.cost.sparse_margin = 0.99 * e.dense_us / best_sparse;  // just enough
    EXPECT_NE(make_plan(d, config).algorithm, Algorithm::Dense);
    config.cost.sparse_margin = 1.01 * e.dense_us / best_sparse;  // not quite
    EXPECT_EQ(make_plan(d, config).algorithm, Algorithm::Dense);
}

// Across nodes (issue #13): each algorithm's bytes that cross nodes cost link_ns on top.
Demand across(Demand d, int nodes, int ranks_per_node) {
    d.nodes = nodes;
    d.ranks_per_node = ranks_per_node;
    return d;
}

TEST(Planner, LinkCostsNothingOnOneNode) {
    CostParams slow;
    slow.link_ns = 9.0;
    const Demand d = demand(16384, 4, 4, 0.1);
    const CostEstimate with = estimate_costs(d, slow), without = estimate_costs(d, CostParams{});
    EXPECT_DOUBLE_EQ(with.dense_us, without.dense_us);
    EXPECT_DOUBLE_EQ(with.aggregator_us, without.aggregator_us);
    EXPECT_DOUBLE_EQ(with.allgather_us, without.allgather_us);
}

TEST(Planner, LinkCostFollowsTheBytesThatCrossNodes) {
    CostParams slow;
    slow.link_ns = 9.0;
    const Demand d = across(demand(16384, 4, 4, 0.01), 4, 1);  // 16 MiB, 1%, one rank per node
    const CostEstimate with = estimate_costs(d, slow), without = estimate_costs(d, CostParams{});
    // A ring sends 2(P-1)/P of the buffer each way.
    const double N = static_cast<double>(d.layout.total_bytes());
    EXPECT_NEAR(with.dense_us - without.dense_us, 9.0 * 1.5 * N / 1e3, 1e-6 * N);
    // At 1% the aggregators move a few percent of that; every peer is on another node.
    const double aggregator_extra = with.aggregator_us - without.aggregator_us;
    EXPECT_GT(aggregator_extra, 0.0);
    EXPECT_LT(aggregator_extra, 0.1 * (with.dense_us - without.dense_us));
    // Two ranks per node: a node's ranks share its link for the sparse algorithms' traffic (already
    // in the measured link_ns), while the ring crosses each node boundary once.
    const Demand shared = across(demand(16384, 8, 8, 0.01), 4, 2);
    const CostEstimate s = estimate_costs(shared, slow), s0 = estimate_costs(shared, CostParams{});
    EXPECT_NEAR(s.dense_us - s0.dense_us, 9.0 * 2.0 * 7 / 8 * N / 1e3 / 2, 1e-6 * N);
}

TEST(Planner, NodeMulticastCutsTheUnionThatCrossesNodes) {
    CostParams slow;
    slow.link_ns = 9.0;
    // 8 ranks on 4 nodes at 100%: each aggregator's union goes to 3 nodes instead of 6 ranks there,
    // and a rank receives across the link for half of the 6 aggregators on other nodes.
    Demand d = across(demand(16384, 8, 8, 1.0), 4, 2);
    const CostFeatures plain = cost_features(d);
    d.node_multicast = true;
    const CostFeatures multicast = cost_features(d);
    const double bb = static_cast<double>(d.layout.block_bytes());
    const double union_per_aggregator = static_cast<double>(d.layout.num_blocks()) / 8;
    const double sends_saved = union_per_aggregator * (6 - 3);
    const double receives_saved = union_per_aggregator * 6 / 2;
    EXPECT_NEAR(plain.link[1] - multicast.link[1], bb * (sends_saved + receives_saved) / 2 / 1e3, 1e-6 * bb);
    EXPECT_DOUBLE_EQ(plain.aggregator[1], multicast.aggregator[1]) << "only the link term changes";
    // One rank per node: nothing to save.
    Demand single = across(demand(16384, 4, 4, 1.0), 4, 1);
    const double before = cost_features(single).link[1];
    single.node_multicast = true;
    EXPECT_DOUBLE_EQ(cost_features(single).link[1], before);
}

TEST(Planner, SlowLinksFavourTheAlgorithmThatSendsLess) {
    // 2 MiB at 50%: on one node a fast MPI_Allreduce wins; over 1 Gbit/s links the bytes decide.
    Config config;
    config.cost.dense_table = {{1, 0.3}};
    const Demand local = demand(2048, 4, 4, 0.5);
    EXPECT_EQ(make_plan(local, config).algorithm, Algorithm::Dense);
    config.cost.link_ns = 9.0;
    EXPECT_NE(make_plan(across(local, 4, 1), config).algorithm, Algorithm::Dense);
    // At 100% nothing sends less than the ring: dense stays.
    EXPECT_EQ(make_plan(across(demand(2048, 4, 4, 1.0), 4, 1), config).algorithm, Algorithm::Dense);
}

TEST(Planner, RanksSharingCoresPayForTheAggregatorsGapsAtLowDensity) {
    // 16 MiB on 4 ranks. Where ranks take turns on cores, the aggregators' closing barrier waits for
    // the last rank's zeros in the output's gaps; the allgather ends without it.
    const Config config;
    Demand d = demand(16384, 4, 4, 0.01);
    EXPECT_EQ(cost_features(d).aggregator[4], 0.0);
    EXPECT_EQ(make_plan(d, config).algorithm, Algorithm::Aggregator);
    d.cores_shared = true;
    const CostFeatures f = cost_features(d);
    const double bb = static_cast<double>(d.layout.block_bytes());
    EXPECT_NEAR(f.aggregator[4], (static_cast<double>(d.layout.total_bytes()) - f.union_blocks * bb) / 1e3, 1e-9);
    EXPECT_EQ(make_plan(d, config).algorithm, Algorithm::Allgather);
    // At 10% the allgather's bytes outweigh it.
    Demand denser = demand(16384, 4, 4, 0.1);
    denser.cores_shared = true;
    EXPECT_EQ(make_plan(denser, config).algorithm, Algorithm::Aggregator);
    // A sparse output (the element variant's pairs) has no gaps to write.
    d.dense_output = false;
    EXPECT_EQ(cost_features(d).aggregator[4], 0.0);
}

TEST(Planner, ForcedAlgorithmIsObeyed) {
    Config config;
    config.algorithm = AlgorithmChoice::Aggregator;
    const Plan p = make_plan(demand(1024, 3, 3, 1.0), config);
    EXPECT_EQ(p.algorithm, Algorithm::Aggregator);
    ASSERT_EQ(p.shard_bounds.size(), 4u);
    EXPECT_EQ(p.shard_bounds.front(), 0u);
    EXPECT_EQ(p.shard_bounds.back(), 1024u);
}

TEST(Planner, ShardsBalanceClusteredWork) {
    // All non-zeros in the first tenth of the vector: contiguous equal shards would give it all to
    // aggregator 0.
    Demand d = demand(100000, 4, 4, 0.0);
    const std::size_t hot = d.bins.size() / 10;
    for (std::size_t j = 0; j < hot; ++j)
        d.bins[j] = SumMax{static_cast<std::int64_t>(d.bin_width) * 2, static_cast<std::int64_t>(d.bin_width) / 2};
    const auto bounds = balance_shards(d);
    ASSERT_EQ(bounds.size(), 5u);
    EXPECT_TRUE(std::is_sorted(bounds.begin(), bounds.end()));
    const std::uint64_t hot_end = hot * d.bin_width;
    for (int a = 0; a < 3; ++a) {
        const std::uint64_t width = bounds[static_cast<std::size_t>(a) + 1] - bounds[static_cast<std::size_t>(a)];
        EXPECT_NEAR(static_cast<double>(width), static_cast<double>(hot_end) / 4, static_cast<double>(hot_end) / 20)
            << "shard " << a << " should take a quarter of the hot range";
    }
}

TEST(Planner, EmptyDemandGivesEqualShards) {
    const auto bounds = balance_shards(demand(1000, 4, 4, 0.0));
    EXPECT_EQ(bounds, (std::vector<std::uint64_t>{0, 250, 500, 750, 1000}));
}

}  // namespace
}  // namespace mpix::sparse::detail
