// Specific situations: sub-communicators and several communicators at once, thousands of calls in a
// row, statistics, and the sparse path really moving fewer bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

// A float vector with exactly the blocks `on` set to small integers (rank-dependent).
std::vector<float> sparse_floats(std::size_t count, std::uint32_t block, double density, Pattern p, int rank, int ranks,
                                 unsigned seed) {
    const auto on = block_pattern(p, (count + block - 1) / block, density, rank, ranks, seed);
    auto bytes = make_vector(ElementType::F32, count, block, on, seed + static_cast<unsigned>(rank));
    std::vector<float> v(count);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

// Iteration counts scaled by MPIX_SPARSE_TEST_SCALE (the emulated cluster, where every call crosses a
// shaped TCP link between namespaces sharing two cores, runs fewer).
int scaled(int iterations) {
    const char *v = std::getenv("MPIX_SPARSE_TEST_SCALE");
    const double scale = v != nullptr ? std::atof(v) : 1.0;
    return std::max(1, static_cast<int>(iterations * (scale > 0 ? scale : 1.0)));
}

std::vector<float> reference(const std::vector<float> &in, MPI_Comm comm) {
    std::vector<float> out(in.size());
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, comm);
    return out;
}

TEST(AllreduceCases, SubCommunicatorsInterleavedWithWorld) {
    const int rank = world_rank(), size = world_size();
    MPI_Comm halves;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);  // same group, other rank order
    SparseComm forced(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    for (int round = 0; round < 6; ++round) {
        for (MPI_Comm c : {halves, reversed, forced.get(), MPI_COMM_WORLD}) {
            int crank, csize;
            MPI_Comm_rank(c, &crank);
            MPI_Comm_size(c, &csize);
            auto in = sparse_floats(200000 + static_cast<std::size_t>(round), 256, 0.02, Pattern::Random, crank, csize,
                                    static_cast<unsigned>(round) + 11);
            std::vector<float> out(in.size());
            EXPECT_EQ(
                MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_FLOAT, MPI_SUM, c),
                MPI_SUCCESS);
            EXPECT_EQ(out, reference(in, c)) << "round " << round;
        }
    }
    MPI_Comm_free(&halves);
    MPI_Comm_free(&reversed);
}

TEST(AllreduceCases, ThousandsOfCallsInARow) {
    const int rank = world_rank(), size = world_size();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    MPIX_Sparse_stats_reset(comm.get());
    const auto in = sparse_floats(8192, 64, 0.05, Pattern::Random, rank, size, 5);
    const auto want = reference(in, MPI_COMM_WORLD);
    std::vector<float> out(in.size());
    int failures = 0;
    const int calls = scaled(3000);
    for (int i = 0; i < calls; ++i) {
        if (MPIX_Sparse_allreduce(in.data(), out.data(), 8192, MPI_FLOAT, MPI_SUM, comm.get()) != MPI_SUCCESS)
            ++failures;
        if (i % 250 == 0 && out != want) ++failures;
    }
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(out, want);
    EXPECT_EQ(stats_of(comm.get()).calls, calls);
}

TEST(AllreduceCases, LargeCallsBackToBackWithMpiInBetween) {
    // Rendezvous results whose acknowledgements arrive after the receiver finished: a rank that
    // returned and sat in MPI (not progressing UCX) once left its aggregator waiting forever.
    const int rank = world_rank(), size = world_size();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    const auto in = sparse_floats(std::size_t{1} << 22, 256, 0.1, Pattern::Random, rank, size, 17);
    const auto want = reference(in, MPI_COMM_WORLD);
    std::vector<float> out(in.size());
    for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_FLOAT, MPI_SUM,
                                        comm.get()),
                  MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    EXPECT_EQ(out, want);
}

TEST(AllreduceCases, StatisticsCountCallsPathsAndBytes) {
    const int rank = world_rank(), size = world_size();
    SparseComm comm(MPI_COMM_WORLD, {});
    MPI_Comm c = comm.get();
    EXPECT_EQ(stats_of(c).calls, 0);
    std::vector<float> small(16, 1.0f), out(16);
    EXPECT_EQ(MPIX_Sparse_allreduce(small.data(), out.data(), 16, MPI_FLOAT, MPI_SUM, c), MPI_SUCCESS);
    MPIX_Sparse_stats s = stats_of(c);
    EXPECT_EQ(s.calls, 1);
    EXPECT_EQ(s.dense_fallbacks, 1) << "16 floats are below the dense threshold";
    EXPECT_EQ(s.last_algorithm, MPIX_SPARSE_ALGORITHM_DENSE);
    EXPECT_EQ(s.bytes_sent, 0);
    auto in = sparse_floats(1 << 22, 256, 0.01, Pattern::Random, rank, size, 9);
    std::vector<float> big(in.size());
    EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), big.data(), static_cast<MPI_Count>(in.size()), MPI_FLOAT, MPI_SUM, c),
              MPI_SUCCESS);
    s = stats_of(c);
    EXPECT_EQ(s.calls, 2);
    if (size > 1) {
        EXPECT_NE(s.last_algorithm, MPIX_SPARSE_ALGORITHM_DENSE) << "1% density must take a sparse path";
        EXPECT_GT(s.bytes_sent, 0);
        EXPECT_GT(s.bytes_received, 0);
    }
    EXPECT_EQ(MPIX_Sparse_stats_reset(c), MPI_SUCCESS);
    EXPECT_EQ(stats_of(c).calls, 0);
    EXPECT_EQ(stats_of(c).bytes_sent, 0);
}

TEST(AllreduceCases, OnePercentDensitySendsASmallFractionOfTheBuffer) {
    const int rank = world_rank(), size = world_size();
    if (size == 1) GTEST_SKIP() << "nothing travels on one rank";
    for (const char *algorithm : {"auto", "aggregator"}) {
        // Flat: the formula below is the colocated all-to-all's (the emulated cluster with 2 ranks
        // per node would otherwise reduce hierarchically; CommCreate.HierarchicalReduction checks that),
        // and every rank gets results straight from the aggregators (node multicast moves sends from
        // aggregators to the ranks that forward).
        SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", algorithm},
                                         {"mpix_sparse_hierarchical", "off"},
                                         {"mpix_sparse_node_multicast", "off"}});
        const std::size_t count = std::size_t{1} << 22;  // 16 MiB of floats
        auto in = sparse_floats(count, 256, 0.01, Pattern::Random, rank, size, 21);
        std::vector<float> out(count);
        MPIX_Sparse_stats_reset(comm.get());
        const int calls = 5;
        for (int i = 0; i < calls; ++i)
            ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                            comm.get()),
                      MPI_SUCCESS);
        EXPECT_EQ(out, reference(in, MPI_COMM_WORLD));
        const double per_call = static_cast<double>(stats_of(comm.get()).bytes_sent) / calls;
        const double fraction = per_call / static_cast<double>(count * sizeof(float));
        // Each rank sends its 1% to the aggregators and, as an aggregator, its shard of the union to
        // the other ranks: (P-1)/P (d + u) with u = 1 - 0.99^P for random patterns, 3.7% on 4 ranks,
        // against 2(P-1)/P = up to 200% for a ring allreduce.
        const double union_density = 1.0 - std::pow(0.99, size);
        const double expected = (size - 1.0) / size * (0.01 + union_density);
        EXPECT_LT(fraction, 1.25 * expected) << algorithm << ": rank " << rank << " sent " << per_call;
        if (size <= 4) {
            EXPECT_LT(fraction, 0.05) << algorithm << ": rank " << rank << " sent " << per_call;
        }
        EXPECT_GT(fraction, 0.0);
    }
}

// Vectors too large to stay cached take the streaming paths: the output's zeros and results are
// written once by the sink, payloads go into shared memory with streaming stores, gap-free runs
// through each worker's ring of slots and results through each aggregator's (1.5 MiB shards of
// 256 KiB runs on 4 ranks: slots are reused; reusing them too early fails here, on 2 and 4 ranks:
// one run early for contributions, without the workers' marks for results). The aggregator at
// every density (1% mostly packed, 30-50% dense runs with gaps, 100% gap-free runs) and the
// allgather at 1% and 30%, out of place into an output full of garbage (nothing may be left
// unwritten) and in place, against MPI_Allreduce. (A regression guard: the scan's zero fill passed
// it too.)
TEST(AllreduceCases, LargeOutputsAreWrittenCompletelyAtEveryDensity) {
    const int rank = world_rank(), size = world_size();
    const std::size_t count = (std::size_t{6} << 20) / sizeof(float) + 77;  // 6 MiB, a partial last block
    for (const char *algorithm : {"aggregator", "allgather"}) {
        SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", algorithm}});
        const bool gather = std::string(algorithm) == "allgather";
        for (double density : {0.01, 0.3, 0.5, 1.0}) {
            if (gather && density > 0.3) continue;  // every rank gathers every contribution
            const auto in = sparse_floats(count, 256, density, Pattern::Random, rank, size, 23);
            const auto want = reference(in, MPI_COMM_WORLD);
            std::vector<float> out(count, std::nanf(""));
            ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                            comm.get()),
                      MPI_SUCCESS);
            EXPECT_EQ(std::memcmp(out.data(), want.data(), count * sizeof(float)), 0)
                << algorithm << ", density " << density;
            std::vector<float> inplace = in;
            ASSERT_EQ(MPIX_Sparse_allreduce(MPI_IN_PLACE, inplace.data(), static_cast<MPI_Count>(count), MPI_FLOAT,
                                            MPI_SUM, comm.get()),
                      MPI_SUCCESS);
            EXPECT_EQ(std::memcmp(inplace.data(), want.data(), count * sizeof(float)), 0)
                << algorithm << ", in place, density " << density;
        }
    }
}

// Calls of one count whose non-zero blocks move: within the first quarter, then over the whole
// vector, and back. The shards, balanced by work, move with them, so every other call the scan's
// guess of the blocks this rank aggregates itself (the last call's shard, which it leaves unstaged) is
// wrong: blocks it left unstaged now go to another aggregator and must travel from the input.
TEST(AllreduceCases, ShardsThatMoveBetweenCallsOfOneCount) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP() << "one rank aggregates every block itself";
    const std::size_t count = (std::size_t{8} << 20) / sizeof(float);  // large enough for the scan to stage
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    std::vector<float> in(count), out(count);
    for (int call = 0; call < 6; ++call) {
        const std::size_t blocks = (call % 2 == 0 ? count / 4 : count) / 256;
        std::fill(in.begin(), in.end(), 0.0f);
        std::mt19937 rng(static_cast<unsigned>(rank * 31 + call));
        for (std::size_t b = 0; b < blocks; ++b)
            if (rng() % 2 == 0) in[b * 256 + rng() % 256] = static_cast<float>(1 + rng() % 7);
        const auto want = reference(in, MPI_COMM_WORLD);
        std::fill(out.begin(), out.end(), std::nanf(""));
        ASSERT_EQ(
            MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM, comm.get()),
            MPI_SUCCESS);
        EXPECT_EQ(std::memcmp(out.data(), want.data(), count * sizeof(float)), 0) << "call " << call;
    }
}

TEST(AllreduceCases, InPlaceEqualsOutOfPlaceBitwise) {
    const int rank = world_rank(), size = world_size();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    // Fractional values: the summation order matters, and must be the same both ways and on all ranks.
    std::vector<double> in(300000, 0.0);
    std::mt19937_64 rng(static_cast<unsigned>(rank) + 40);
    for (std::size_t i = 0; i < in.size(); i += 7)
        in[i] = std::uniform_real_distribution<double>(-1, 1)(rng);
    std::vector<double> out(in.size()), inplace = in;
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_DOUBLE, MPI_SUM,
                                    comm.get()),
              MPI_SUCCESS);
    ASSERT_EQ(MPIX_Sparse_allreduce(MPI_IN_PLACE, inplace.data(), static_cast<MPI_Count>(in.size()), MPI_DOUBLE,
                                    MPI_SUM, comm.get()),
              MPI_SUCCESS);
    EXPECT_EQ(std::memcmp(out.data(), inplace.data(), out.size() * 8), 0);
    EXPECT_TRUE(same_on_all_ranks(out.data(), out.size() * 8, MPI_COMM_WORLD));
    // Run to run: the same inputs give the same bits.
    std::vector<double> again(in.size());
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), again.data(), static_cast<MPI_Count>(in.size()), MPI_DOUBLE, MPI_SUM,
                                    comm.get()),
              MPI_SUCCESS);
    EXPECT_EQ(std::memcmp(out.data(), again.data(), out.size() * 8), 0);
    // And close to MPI_Allreduce, which sums in another order.
    std::vector<double> ref(in.size());
    MPI_Allreduce(in.data(), ref.data(), static_cast<int>(in.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (std::size_t i = 0; i < in.size(); ++i)
        ASSERT_NEAR(out[i], ref[i], 1e-12) << i;
    (void)size;
}

TEST(AllreduceCases, FreedCommunicatorReleasesItsState) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    std::vector<int> in(100000, 0), out(100000);
    in[world_rank()] = 1;
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 100000, MPI_INT, MPI_SUM, dup), MPI_SUCCESS);
    EXPECT_EQ(stats_of(dup).calls, 1);
    MPI_Comm_free(&dup);  // the attribute's delete callback releases the library's state
    MPI_Comm again;
    MPI_Comm_dup(MPI_COMM_WORLD, &again);  // may reuse the handle value: must start from zero
    EXPECT_EQ(stats_of(again).calls, 0);
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 100000, MPI_INT, MPI_SUM, again), MPI_SUCCESS);
    EXPECT_EQ(std::accumulate(out.begin(), out.end(), 0), world_size());
    MPI_Comm_free(&again);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
