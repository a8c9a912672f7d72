// Out of memory after the agreement, on one rank: the allgather's records (BufferPool's aligned
// allocation, made to fail here on demand by a replaced operator new[]) cannot be had, so that rank
// cannot join the MPI_Iallgather its peers enter. It must neither plan again (the tuner counts each
// plan; retrying spun forever while the peers waited) nor go on to its next collective call (which
// would pair with the peers' allgather): it breaks the communicator and returns the error at once,
// and its peers end by their timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "mpi_test_util.h"

namespace {
std::atomic<std::size_t> g_fail_from{SIZE_MAX};  // aligned array allocations this large fail
}  // namespace

void *operator new[](std::size_t n, std::align_val_t align) {
    if (n >= g_fail_from.load()) throw std::bad_alloc();
    const auto a = static_cast<std::size_t>(align);
    if (void *p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
    throw std::bad_alloc();
}
void operator delete[](void *p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}

namespace mpix::sparse::detail::testing {
namespace {

TEST(OutOfMemory, NoBufferForTheAllgatherBreaksTheCommunicatorAtOnce) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP() << "needs peers";
    SparseComm comm(
        MPI_COMM_WORLD,
        {{"mpix_sparse_algorithm", "allgather"}, {"mpix_sparse_dense_below", "0"}, {"mpix_sparse_timeout", "2"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    // 4096 blocks of 256 floats, every other one set: records of about 2 MiB per rank.
    const std::size_t count = std::size_t{1} << 20;
    std::vector<float> in(count, 0.0f), out(count);
    for (std::size_t i = 0; i < count; i += 512)
        in[i] = 1.0f;
    if (rank == 1) g_fail_from = std::size_t{1} << 20;
    MPIX_Sparse_request request = MPIX_SPARSE_REQUEST_NULL;
    ASSERT_EQ(MPIX_Sparse_iallreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                     comm.get(), &request),
              MPI_SUCCESS);
    const auto t0 = std::chrono::steady_clock::now();
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
        rc = MPIX_Sparse_test(&request, &flag);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    g_fail_from = SIZE_MAX;
    if (!flag) {
        std::fprintf(stderr, "[rank %d] the call is still running after 20 s\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);  // nothing to clean up with: the request cannot complete
    }
    if (rank == 1) {
        EXPECT_EQ(class_of(rc), MPIX_ERR_SPARSE_INTERN) << "out of memory";
        EXPECT_LT(seconds, 1.0) << "before its own timeout";
    } else {
        EXPECT_EQ(class_of(rc), MPIX_ERR_SPARSE_TIMEOUT);
    }
    // Broken on every rank: a later call fails at once instead of pairing with another collective.
    const auto t1 = std::chrono::steady_clock::now();
    EXPECT_NE(
        MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM, comm.get()),
        MPI_SUCCESS);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count(), 0.5);
    MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
