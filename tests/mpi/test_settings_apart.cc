// Environment settings that differ between ranks, on a communicator used without
// MPIX_Sparse_comm_create: rank 0 reads MPIX_SPARSE_ALGORITHM=dense, the others auto, so rank 0 would
// post MPI_Allreduce where the others post their agreement. The variable is set before this process's
// first library call (the environment is read once, at that call). Own executable: nothing else may
// run before it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

int error_class(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

TEST(SettingsApart, EveryRankGetsAnInfoErrorAndMatchingInfoKeysWork) {
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    if (world_rank() == 0) setenv("MPIX_SPARSE_ALGORITHM", "dense", 1);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const int n = 1 << 18;  // 1 MiB of floats: the sparse path where the algorithm is auto
    std::vector<float> in(n, 0.0f), out(n, 7.0f);
    in[100] = 1.0f;
    for (int call = 0; call < 2; ++call) {  // every call, not only the first, until the settings agree
        const int rc = MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm);
        ASSERT_NE(rc, MPI_SUCCESS) << "call " << call;
        EXPECT_EQ(error_class(rc), MPIX_ERR_SPARSE_INFO) << "call " << call;
        EXPECT_EQ(out[100], 7.0f) << "no result written";
    }
    MPI_Comm created = MPI_COMM_WORLD;
    int rc = MPIX_Sparse_comm_create(comm, MPI_INFO_NULL, &created);
    EXPECT_EQ(error_class(rc), MPIX_ERR_SPARSE_INFO);
    EXPECT_EQ(created, MPI_COMM_NULL);

    // An info key that every rank sets overrides the environment: the settings agree again.
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_sparse_algorithm", "aggregator");
    rc = MPIX_Sparse_comm_create(comm, info, &created);
    MPI_Info_free(&info);
    ASSERT_EQ(rc, MPI_SUCCESS);
    MPI_Comm_set_errhandler(created, MPI_ERRORS_RETURN);
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, created), MPI_SUCCESS);
    EXPECT_EQ(out[100], static_cast<float>(world_size()));
    EXPECT_EQ(out[101], 0.0f);
    MPIX_Sparse_comm_free(&created);
    MPI_Comm_free(&comm);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
