// Counts beyond 2^31 elements (MPI_Count is 64-bit). The block variant runs in place on a calloc'd
// buffer: untouched pages are the kernel's shared zero page, so 8 GiB of mostly-zero floats costs
// almost no memory, and only the union's blocks are ever written. The element variant covers 2^34
// indices with the sparse output, where packed block numbers (32-bit) must restart along the range.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

struct FreeDeleter {
    void operator()(float *p) const { std::free(p); }
};

TEST(LargeCount, BlockVariantBeyondTwoToThe31) {
    const int rank = world_rank(), size = world_size();
    const MPI_Count count = (MPI_Count{1} << 31) + 4096 + 3;
    std::unique_ptr<float, FreeDeleter> buf(
        static_cast<float *>(std::calloc(static_cast<std::size_t>(count), sizeof(float))));
    ASSERT_NE(buf, nullptr);
    float *v = buf.get();
    const MPI_Count marks[] = {5, (MPI_Count{1} << 31) - 1, MPI_Count{1} << 31, (MPI_Count{1} << 31) + 777, count - 1};
    for (MPI_Count m : marks)
        v[m] = static_cast<float>(rank + 1);
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    ASSERT_EQ(MPIX_Sparse_allreduce(MPI_IN_PLACE, v, count, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
    const float sum = static_cast<float>(size * (size + 1) / 2);
    for (MPI_Count m : marks) {
        EXPECT_EQ(v[m], sum) << "element " << m;
        if (m + 1 < count && m + 1 != marks[3] && m + 1 != marks[2]) {
            EXPECT_EQ(v[m + 1], 0.0f) << "element " << m + 1;
        }
    }
    EXPECT_EQ(v[(MPI_Count{1} << 31) + 300], 0.0f);
    const MPIX_Sparse_stats s = stats_of(comm.get());
    if (size > 1) {
        EXPECT_EQ(s.last_algorithm, MPIX_SPARSE_ALGORITHM_AGGREGATOR);
        EXPECT_LT(s.bytes_sent, 1 << 20) << "five blocks' worth of data, not gigabytes";
    }
}

TEST(LargeCount, ElementVariantOverTwoToThe34Indices) {
    const int rank = world_rank(), size = world_size();
    const MPI_Count count = MPI_Count{1} << 34;
    std::vector<std::int64_t> idx{count - 1, 3, (MPI_Count{1} << 32) + rank, MPI_Count{1} << 33};
    std::vector<double> val{1, 2, 4, 8};
    for (const char *algorithm : {"aggregator", "allgather"}) {
        SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", algorithm}});
        MPIX_Sparse_vector result = nullptr;
        ASSERT_EQ(MPIX_Sparse_allreduce_elements_sparse(4, idx.data(), val.data(), count, MPI_DOUBLE, MPI_SUM,
                                                        comm.get(), &result),
                  MPI_SUCCESS);
        MPI_Count n = 0;
        const std::int64_t *ri;
        const void *rv;
        MPIX_Sparse_vector_get(result, &n, &ri, &rv);
        // Union: 3, 2^32 + r for every rank, 2^33, 2^34 - 1.
        ASSERT_EQ(n, 3 + size) << algorithm;
        const auto *values = static_cast<const double *>(rv);
        EXPECT_EQ(ri[0], 3);
        EXPECT_EQ(values[0], 2.0 * size);
        for (int r = 0; r < size; ++r) {
            EXPECT_EQ(ri[1 + r], (MPI_Count{1} << 32) + r);
            EXPECT_EQ(values[1 + r], 4.0);
        }
        EXPECT_EQ(ri[1 + size], MPI_Count{1} << 33);
        EXPECT_EQ(ri[2 + size], count - 1);
        EXPECT_EQ(values[2 + size], 1.0 * size);
        MPIX_Sparse_vector_free(&result);
    }
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
