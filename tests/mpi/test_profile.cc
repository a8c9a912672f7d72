// The per-phase profile (mpix_sparse_profile): off by default, the phases each path goes through are
// timed when on, nested phases fit inside their parents, and the phases together never exceed the
// wall time of the calls.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

constexpr std::size_t kCount = std::size_t{1} << 20;

MPIX_Sparse_profile profile_of(MPI_Comm comm) {
    MPIX_Sparse_profile p{};
    EXPECT_EQ(MPIX_Sparse_profile_get(comm, &p), MPI_SUCCESS);
    return p;
}

double top_level_sum(const MPIX_Sparse_profile &p) {
    return p.scan + p.agreement + p.dense + p.allgather + p.stream + p.barrier + p.node_broadcast;
}

// Runs `calls` block-sparse sums of a 1%-dense vector on comm; returns the wall time of the calls.
double run_calls(MPI_Comm comm, int calls) {
    const int rank = world_rank(), size = world_size();
    const auto on = block_pattern(Pattern::Random, kCount / 256, 0.01, rank, size, 11);
    const auto bytes = make_vector(ElementType::F32, kCount, 256, on, 40 + static_cast<unsigned>(rank));
    std::vector<float> in(kCount), out(kCount);
    std::memcpy(in.data(), bytes.data(), bytes.size());
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i)
        EXPECT_EQ(
            MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(kCount), MPI_FLOAT, MPI_SUM, comm),
            MPI_SUCCESS);
    return MPI_Wtime() - start;
}

TEST(Profile, OffByDefault) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    run_calls(comm.get(), 2);
    const MPIX_Sparse_profile p = profile_of(comm.get());
    EXPECT_EQ(p.calls, 0);
    EXPECT_EQ(top_level_sum(p), 0.0);
    EXPECT_EQ(p.reduce + p.result_write, 0.0);
}

TEST(Profile, AggregatorCallsTimeTheirPhases) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_profile", "on"}});
    const int calls = 3;
    const double wall = run_calls(comm.get(), calls);
    const MPIX_Sparse_profile p = profile_of(comm.get());
    EXPECT_EQ(p.calls, calls);
    EXPECT_LE(top_level_sum(p), wall);
    if (world_size() > 1) {  // one rank has nothing to stream: MPI serves it
        EXPECT_GT(p.scan, 0.0);
        EXPECT_EQ(p.dense, 0.0);
        EXPECT_EQ(p.allgather, 0.0);
        EXPECT_GT(p.agreement, 0.0);
        EXPECT_GT(p.stream, 0.0);
        EXPECT_GT(p.barrier, 0.0);
        EXPECT_GT(p.reduce, 0.0);  // every rank aggregates a shard (colocated)
        EXPECT_LE(p.reduce + p.result_write, p.stream);
    }
    // Reset clears the profile with the statistics.
    ASSERT_EQ(MPIX_Sparse_stats_reset(comm.get()), MPI_SUCCESS);
    EXPECT_EQ(profile_of(comm.get()).calls, 0);
    EXPECT_EQ(top_level_sum(profile_of(comm.get())), 0.0);
}

TEST(Profile, DensePathIsTimedAsDense) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "dense"}, {"mpix_sparse_profile", "on"}});
    const double wall = run_calls(comm.get(), 2);
    const MPIX_Sparse_profile p = profile_of(comm.get());
    EXPECT_EQ(p.calls, 2);
    EXPECT_GT(p.dense, 0.0);
    EXPECT_EQ(p.stream + p.allgather + p.reduce + p.barrier, 0.0);
    EXPECT_LE(top_level_sum(p), wall);
}

TEST(Profile, ElementVariantTimesItsSort) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_profile", "on"}});
    const int rank = world_rank();
    std::vector<std::int64_t> indices;
    std::vector<double> values;
    for (std::int64_t i = 0; i < 5000; ++i) {
        indices.push_back((i * 7919 + rank * 13) % 1000000);
        values.push_back(static_cast<double>(i % 17) + 1.0);
    }
    std::vector<double> out(1000000);
    ASSERT_EQ(MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(indices.size()), indices.data(), values.data(),
                                             out.data(), static_cast<MPI_Count>(out.size()), MPI_DOUBLE, MPI_SUM,
                                             comm.get()),
              MPI_SUCCESS);
    const MPIX_Sparse_profile p = profile_of(comm.get());
    EXPECT_EQ(p.calls, 1);
    EXPECT_GT(p.scan, 0.0);
}

TEST(Profile, BadValueIsAnInfoError) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_profile", "sometimes");
    MPI_Comm newcomm = MPI_COMM_NULL;
    MPI_Errhandler saved;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &newcomm);
    MPI_Info_free(&info);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_INFO);
    EXPECT_EQ(newcomm, MPI_COMM_NULL);
    MPIX_Sparse_profile p{};
    EXPECT_NE(MPIX_Sparse_profile_get(MPI_COMM_WORLD, nullptr), MPI_SUCCESS);
    EXPECT_EQ(MPIX_Sparse_profile_get(MPI_COMM_WORLD, &p), MPI_SUCCESS);  // a communicator never used reads zero
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved);
    MPI_Errhandler_free(&saved);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
