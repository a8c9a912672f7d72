// The link probe runs once per set of processes: a later communicator over the same processes takes
// the value every rank remembered, one over other processes (or where some rank forgot) probes again.
// Node layouts are given to LinkCosts directly, so the probe runs on one machine too.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/comm_state.h"
#include "core/library.h"
#include "core/link_probe.h"
#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

// Every rank on a node of its own.
std::vector<int> one_rank_per_node(MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    std::vector<int> node(static_cast<std::size_t>(size));
    std::iota(node.begin(), node.end(), 0);
    return node;
}

bool same_everywhere(double v, MPI_Comm comm) {
    return same_on_all_ranks(&v, sizeof v, comm);
}

TEST(LinkCosts, KeyIsTheSortedWorldRanks) {
    MPI_Comm reversed = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size() - world_rank(), &reversed);
    std::vector<int> all(static_cast<std::size_t>(world_size()));
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(LinkCosts::key_of(MPI_COMM_WORLD), all);
    EXPECT_EQ(LinkCosts::key_of(reversed), all);  // the same processes in another order
    MPI_Comm_free(&reversed);
    MPI_Comm odd_even = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, 0, &odd_even);
    std::vector<int> mine;
    for (int r = world_rank() % 2; r < world_size(); r += 2)
        mine.push_back(r);
    EXPECT_EQ(LinkCosts::key_of(odd_even), mine);
    MPI_Comm_free(&odd_even);
}

TEST(LinkCosts, ASecondCommunicatorOverTheSameProcessesDoesNotProbe) {
    if (world_size() < 2) GTEST_SKIP() << "no link on one rank";
    LinkCosts costs;
    const double first = costs.link_ns(MPI_COMM_WORLD, one_rank_per_node(MPI_COMM_WORLD));
    EXPECT_GT(first, 0.0);
    EXPECT_TRUE(same_everywhere(first, MPI_COMM_WORLD));
    EXPECT_EQ(costs.probes(), 1);
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    EXPECT_EQ(costs.link_ns(dup, one_rank_per_node(dup)), first);
    EXPECT_EQ(costs.probes(), 1) << "the same processes were probed again";
    MPI_Comm_free(&dup);
    if (world_size() >= 4) {  // halves of two ranks: other processes, other links
        MPI_Comm half = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, 0, &half);
        EXPECT_GT(costs.link_ns(half, one_rank_per_node(half)), 0.0);
        EXPECT_EQ(costs.probes(), 2);
        MPI_Comm_free(&half);
    }
}

TEST(LinkCosts, WhereOneRankLacksTheValueAllProbeAgain) {
    if (world_size() < 2) GTEST_SKIP() << "no link on one rank";
    LinkCosts costs;
    const LinkCosts::Key key = LinkCosts::key_of(MPI_COMM_WORLD);
    // Rank 0 alone remembers a value (as after a communicator the others failed to create): taking it
    // would give rank 0 a plan the others do not share.
    const double planted = 1e6;
    if (world_rank() == 0) costs.remember(key, planted);
    const double ns = costs.link_ns(MPI_COMM_WORLD, one_rank_per_node(MPI_COMM_WORLD));
    EXPECT_EQ(costs.probes(), 1);
    EXPECT_NE(ns, planted);
    EXPECT_TRUE(same_everywhere(ns, MPI_COMM_WORLD));
    ASSERT_TRUE(costs.find(key).has_value());
    EXPECT_EQ(*costs.find(key), ns);  // every rank remembers the new value, rank 0 too
}

TEST(LinkCosts, OneNodeHasNoLinkToProbe) {
    LinkCosts costs;
    EXPECT_EQ(costs.link_ns(MPI_COMM_WORLD, std::vector<int>(static_cast<std::size_t>(world_size()), 0)), 0.0);
}

// Through the library: the sparse communicators of a run over several nodes share one probe.
TEST(LinkCosts, CommunicatorsAcrossNodesShareOneProbe) {
    SparseComm first(MPI_COMM_WORLD, {});
    ASSERT_EQ(first.rc(), MPI_SUCCESS);
    const CommState *a = Library::get().find(first.get());
    ASSERT_NE(a, nullptr);
    if (a->nodes() < 2) GTEST_SKIP() << "one node: nothing probed (the cluster tests run this)";
    const int probes = Library::get().link_costs().probes();
    SparseComm second(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    ASSERT_EQ(second.rc(), MPI_SUCCESS);
    const CommState *b = Library::get().find(second.get());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(Library::get().link_costs().probes(), probes);
    EXPECT_EQ(b->config().cost.link_ns, a->config().cost.link_ns);
    EXPECT_GT(b->config().cost.link_ns, 0.0);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
