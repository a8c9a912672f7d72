// Aggregator ranks carved out of a communicator: colocated (all or some ranks aggregate) and
// dedicated (aggregators hold no data and serve inside MPIX_Sparse_comm_create).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

// Runs a few calls on comm and compares with MPI_Allreduce on the same communicator.
// Calls of four counts (`same_count`: one count, so that a dedicated aggregator restarts its stream
// for each), densities 2%-100%, against MPI_Allreduce.
void check_calls(MPI_Comm comm, unsigned seed, bool same_count = false) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int call = 0; call < 4; ++call) {
        const std::size_t count = 150000 + (same_count ? 0 : static_cast<std::size_t>(call) * 1001);
        const double density = call == 3 ? 1.0 : 0.02 * (call + 1);
        const auto on = block_pattern(call % 2 ? Pattern::Clustered : Pattern::Random, (count + 255) / 256, density,
                                      rank, size, seed + static_cast<unsigned>(call));
        const auto bytes = make_vector(ElementType::I64, count, 256, on, seed * 3 + static_cast<unsigned>(rank));
        std::vector<std::int64_t> in(count), out(count, -1), want(count);
        std::memcpy(in.data(), bytes.data(), bytes.size());
        MPI_Allreduce(in.data(), want.data(), static_cast<int>(count), MPI_INT64_T, MPI_SUM, comm);
        EXPECT_EQ(
            MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_INT64_T, MPI_SUM, comm),
            MPI_SUCCESS);
        EXPECT_EQ(out, want) << "call " << call;
    }
}

TEST(CommCreate, ColocatedWithFewerAggregators) {
    const int size = world_size();
    for (int aggregators = 1; aggregators <= size; ++aggregators) {
        for (const char *placement : {"spread", "packed"}) {
            SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_aggregators", std::to_string(aggregators)},
                                             {"mpix_sparse_algorithm", "aggregator"},
                                             {"mpix_sparse_placement", placement}});
            ASSERT_EQ(comm.rc(), MPI_SUCCESS);
            int csize;
            MPI_Comm_size(comm.get(), &csize);
            EXPECT_EQ(csize, size) << "colocated: every rank gets the new communicator";
            check_calls(comm.get(), 10 + static_cast<unsigned>(aggregators));
        }
    }
}

TEST(CommCreate, HierarchicalReduction) {
    // on: node level, leader level, broadcast (on one node too); auto: only across several nodes
    // with several ranks on one (the emulated cluster runs this with 2 ranks per node).
    for (const char *setting : {"on", "auto", "off"}) {
        for (const char *algorithm : {"aggregator", "auto"}) {
            SparseComm comm(MPI_COMM_WORLD,
                            {{"mpix_sparse_hierarchical", setting}, {"mpix_sparse_algorithm", algorithm}});
            ASSERT_EQ(comm.rc(), MPI_SUCCESS);
            check_calls(comm.get(), 70);
            // The in-place form goes through the same levels.
            const int rank = world_rank();
            std::vector<double> v(300000, 0.0);
            for (std::size_t i = static_cast<std::size_t>(rank); i < v.size(); i += 997)
                v[i] = 1.0 + rank;
            std::vector<double> want(v.size());
            MPI_Allreduce(v.data(), want.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            EXPECT_EQ(MPIX_Sparse_allreduce(MPI_IN_PLACE, v.data(), static_cast<MPI_Count>(v.size()), MPI_DOUBLE,
                                            MPI_SUM, comm.get()),
                      MPI_SUCCESS);
            EXPECT_EQ(v, want) << setting << "/" << algorithm;
            EXPECT_EQ(stats_of(comm.get()).calls, 5);
        }
    }
}

TEST(CommCreate, HierarchicalBroadcastMovesOnlyTheUnion) {
    // At 1% block density the node leader broadcasts the union's blocks, not the whole result: the
    // other ranks of a node receive a small fraction of the buffer per call (the node level's union
    // and the broadcast), where a dense broadcast alone would be the whole buffer.
    const int rank = world_rank(), size = world_size();
    if (size == 1) GTEST_SKIP() << "no node broadcast on one rank";
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_hierarchical", "on"}, {"mpix_sparse_algorithm", "aggregator"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_rank, node_size;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    const std::size_t count = std::size_t{1} << 20;  // 8 MiB of doubles, 4096 blocks
    const auto on = block_pattern(Pattern::Random, count / 256, 0.01, rank, size, 77);
    const auto bytes = make_vector(ElementType::F64, count, 256, on, 78 + static_cast<unsigned>(rank));
    std::vector<double> in(count), out(count, -1.0), want(count);
    std::memcpy(in.data(), bytes.data(), bytes.size());
    MPI_Allreduce(in.data(), want.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPIX_Sparse_stats_reset(comm.get());
    const int calls = 3;
    for (int i = 0; i < calls; ++i) {
        std::fill(out.begin(), out.end(), -1.0);
        ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_DOUBLE, MPI_SUM,
                                        comm.get()),
                  MPI_SUCCESS);
        ASSERT_EQ(out, want) << "call " << i;
    }
    if (node_size > 1 && node_rank > 0) {
        const double received = static_cast<double>(stats_of(comm.get()).bytes_received) / calls;
        EXPECT_GT(received, 0.0);
        EXPECT_LT(received, 0.25 * static_cast<double>(count * sizeof(double)))
            << "rank " << rank << " received " << received << " bytes per call";
    }
}

TEST(CommCreate, DedicatedAggregators) {
    const int size = world_size(), rank = world_rank();
    if (size < 2) GTEST_SKIP() << "dedicated mode needs an aggregator and a worker";
    for (int aggregators = 1; aggregators < size && aggregators <= 2; ++aggregators) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpix_sparse_aggregator_mode", "dedicated");
        MPI_Info_set(info, "mpix_sparse_aggregators", std::to_string(aggregators).c_str());
        MPI_Info_set(info, "mpix_sparse_algorithm", "aggregator");
        MPI_Info_set(info, "mpix_sparse_placement", "packed");
        MPI_Comm workers = MPI_COMM_WORLD;
        ASSERT_EQ(MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &workers), MPI_SUCCESS);
        MPI_Info_free(&info);
        // Packed placement: ranks 0..aggregators-1 serve and come back only after the workers freed.
        const bool aggregator = rank < aggregators;
        EXPECT_EQ(workers == MPI_COMM_NULL, aggregator) << "rank " << rank;
        if (!aggregator) {
            int wsize;
            MPI_Comm_size(workers, &wsize);
            EXPECT_EQ(wsize, size - aggregators);
            check_calls(workers, 40 + static_cast<unsigned>(aggregators));
            check_calls(workers, 50 + static_cast<unsigned>(aggregators), true);
            // Traffic goes to the aggregators: a worker sends and receives, and the element variant
            // works over dedicated aggregators too.
            const MPIX_Sparse_stats s = stats_of(workers);
            if (wsize > 1) {
                EXPECT_GT(s.bytes_sent, 0);
            }
            std::vector<std::int64_t> idx{3, 99};
            std::vector<float> val{1, 2}, out(100);
            EXPECT_EQ(
                MPIX_Sparse_allreduce_elements(2, idx.data(), val.data(), out.data(), 100, MPI_FLOAT, MPI_SUM, workers),
                MPI_SUCCESS);
            EXPECT_EQ(out[99], 2.0f * static_cast<float>(wsize));
            EXPECT_EQ(MPIX_Sparse_comm_free(&workers), MPI_SUCCESS);
            EXPECT_EQ(workers, MPI_COMM_NULL);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

// MPIX_Sparse_comm_free with requests in flight over dedicated aggregators: the workers' goodbyes
// must follow their contributions. They once went first, so the aggregators left and the workers
// waited for results that never came (a timeout here, so that it fails instead of hanging).
TEST(CommCreate, FreeCompletesRequestsInFlightBeforeTheAggregatorsLeave) {
    const int size = world_size(), rank = world_rank();
    if (size < 2) GTEST_SKIP() << "dedicated mode needs an aggregator and a worker";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_aggregator_mode", "dedicated");
    MPI_Info_set(info, "mpix_sparse_algorithm", "aggregator");
    MPI_Info_set(info, "mpix_sparse_placement", "packed");
    MPI_Info_set(info, "mpix_sparse_timeout", "20");
    MPI_Comm workers = MPI_COMM_WORLD;
    ASSERT_EQ(MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &workers), MPI_SUCCESS);
    MPI_Info_free(&info);
    if (rank > 0) {
        int wrank, wsize;
        MPI_Comm_rank(workers, &wrank);
        MPI_Comm_size(workers, &wsize);
        const std::size_t count = 150000;
        std::vector<std::vector<std::int64_t>> in, out, want;
        std::vector<MPIX_Sparse_request> requests(3, MPIX_SPARSE_REQUEST_NULL);
        for (int i = 0; i < 3; ++i) {
            const auto on = block_pattern(Pattern::Random, (count + 255) / 256, 0.05, wrank, wsize, 70u + i);
            const auto bytes = make_vector(ElementType::I64, count, 256, on, 80u + static_cast<unsigned>(rank + i));
            in.emplace_back(count);
            std::memcpy(in.back().data(), bytes.data(), bytes.size());
            want.emplace_back(count);
            MPI_Allreduce(in.back().data(), want.back().data(), static_cast<int>(count), MPI_INT64_T, MPI_SUM, workers);
            out.emplace_back(count, -1);
        }
        for (int i = 0; i < 3; ++i)
            ASSERT_EQ(MPIX_Sparse_iallreduce(in[i].data(), out[i].data(), static_cast<MPI_Count>(count), MPI_INT64_T,
                                             MPI_SUM, workers, &requests[static_cast<std::size_t>(i)]),
                      MPI_SUCCESS);
        EXPECT_EQ(MPIX_Sparse_comm_free(&workers), MPI_SUCCESS);
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(MPIX_Sparse_wait(&requests[static_cast<std::size_t>(i)]), MPI_SUCCESS) << "request " << i;
            EXPECT_EQ(out[i], want[i]) << "request " << i;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

// One dedicated aggregator (world rank 0: packed), the aggregator algorithm, node multicast as given.
int create_dedicated_packed(const char *multicast, MPI_Comm *workers) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_aggregator_mode", "dedicated");
    MPI_Info_set(info, "mpix_sparse_algorithm", "aggregator");
    MPI_Info_set(info, "mpix_sparse_placement", "packed");
    MPI_Info_set(info, "mpix_sparse_node_multicast", multicast);
    const int rc = MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, workers);
    MPI_Info_free(&info);
    return rc;
}

// Node multicast, on the fake nodes {0, 1} and {2, 3} of mpi_np4_node_multicast: the dedicated
// aggregator (rank 0, packed) sends its results to worker 1 (its node) and to worker 2 only; worker 2
// passes each on to worker 3, so it sends about what worker 3 receives on top of its contribution.
TEST(CommCreate, DedicatedNodeMulticastForwardsWithinANode) {
    const char *per_node = std::getenv("MPIX_SPARSE_TEST_RANKS_PER_NODE");
    if (world_size() != 4 || per_node == nullptr || std::string(per_node) != "2")
        GTEST_SKIP() << "needs 4 ranks on fake nodes of 2 (mpi_np4_node_multicast)";
    const int rank = world_rank();
    for (const char *multicast : {"on", "off"}) {
        MPI_Comm workers = MPI_COMM_WORLD;
        ASSERT_EQ(create_dedicated_packed(multicast, &workers), MPI_SUCCESS);
        if (rank > 0) {
            check_calls(workers, 90);
            const MPIX_Sparse_stats s = stats_of(workers);
            long long mine[2] = {s.bytes_sent, s.bytes_received}, all[6] = {};
            MPI_Allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, workers);
            // Worker indices 0, 1, 2 are world ranks 1, 2, 3.
            const long long forwarded = all[2] - all[4], received = all[5];
            if (std::string(multicast) == "on") {
                EXPECT_GT(forwarded, received / 2) << "worker 2 did not pass the results on";
            } else {
                EXPECT_LT(forwarded, received / 2) << "worker 2 sent results without node multicast";
            }
            EXPECT_EQ(MPIX_Sparse_comm_free(&workers), MPI_SUCCESS);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

// Ranks that ask for different node multicast settings get none (a fanout planned by some ranks
// only would leave a worker waiting for results nobody forwards): calls complete and are exact.
TEST(CommCreate, NodeMulticastSettingsThatDifferGiveNone) {
    const char *per_node = std::getenv("MPIX_SPARSE_TEST_RANKS_PER_NODE");
    if (world_size() < 3 || per_node == nullptr) GTEST_SKIP() << "needs fake nodes (mpi_np*_node_multicast)";
    const int rank = world_rank();
    const char *mine = rank == world_size() - 1 ? "off" : "on";
    {
        SparseComm comm(MPI_COMM_WORLD,
                        {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_node_multicast", mine}});
        ASSERT_EQ(comm.rc(), MPI_SUCCESS);
        check_calls(comm.get(), 95);
    }
    MPI_Comm workers = MPI_COMM_WORLD;
    ASSERT_EQ(create_dedicated_packed(mine, &workers), MPI_SUCCESS);
    if (workers != MPI_COMM_NULL) {
        check_calls(workers, 96);
        EXPECT_EQ(MPIX_Sparse_comm_free(&workers), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST(CommCreate, DedicatedNeedsAWorker) {
    const int size = world_size();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_aggregator_mode", "dedicated");
    MPI_Info_set(info, "mpix_sparse_aggregators", std::to_string(size).c_str());
    MPI_Comm c = MPI_COMM_WORLD;
    const int rc = MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &c);
    MPI_Info_free(&info);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_INFO);
    EXPECT_EQ(c, MPI_COMM_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
