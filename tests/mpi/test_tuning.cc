// Learned algorithm choice (mpix_sparse_tune): every rank runs the same algorithm in every call while
// the tuner tries the candidates, results stay exact, and ranks that tune differently get an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

// The same algorithm on every rank of comm.
bool same_algorithm_everywhere(int algorithm, MPI_Comm comm) {
    int lo = algorithm, hi = algorithm;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, comm);
    return lo == hi;
}

// 256K floats, every block non-zero on every rank: the cost model picks MPI_Allreduce and predicts the
// aggregator within CallTuner::kExploreFactor of it (the default constants, 2-4 ranks: 1.09-1.12x;
// at 1M floats it now picks the aggregator, with dense 1.7x away), so the tuner
// must try it by the second call (the candidates run in turn). Small integers: every
// algorithm's sum is exact, bit for bit.
TEST(Tuning, EveryRankRunsTheSameAlgorithmWhileTheTunerTriesThem) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_tune", "on"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    const int n = 1 << 18;
    std::vector<float> in(n), out(n), ref(n);
    for (int i = 0; i < n; ++i)
        in[static_cast<std::size_t>(i)] = static_cast<float>((i + world_rank()) % 7 + 1);
    MPI_Allreduce(in.data(), ref.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    std::set<int> ran;
    for (int call = 0; call < 10; ++call) {
        std::fill(out.begin(), out.end(), -1.0f);
        ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
        ASSERT_EQ(out, ref) << "call " << call;
        const int algorithm = stats_of(comm.get()).last_algorithm;
        ASSERT_TRUE(same_algorithm_everywhere(algorithm, comm.get())) << "call " << call;
        ran.insert(algorithm);
    }
    if (world_size() > 1) {
        EXPECT_GE(ran.size(), 2u) << "the tuner never tried an algorithm other than the model's";
    }
}

// Sparse data too, where the allgather and the aggregator compete; a non-blocking call in between
// reports nothing and uses what was learned.
TEST(Tuning, SparseCallsStayExactAndNonBlockingOnesFollow) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_tune", "on"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    const int n = 1 << 18, block = 256;
    std::vector<int> in(n, 0), out(n), ref(n);
    for (int b = world_rank(); b < n / block; b += 13)
        for (int i = 0; i < block; ++i)
            in[static_cast<std::size_t>(b * block + i)] = b + i;
    MPI_Allreduce(in.data(), ref.data(), n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int call = 0; call < 12; ++call) {
        std::fill(out.begin(), out.end(), -1);
        if (call % 4 == 3) {
            MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
            ASSERT_EQ(MPIX_Sparse_iallreduce(in.data(), out.data(), n, MPI_INT, MPI_SUM, comm.get(), &r), MPI_SUCCESS);
            ASSERT_EQ(MPIX_Sparse_wait(&r), MPI_SUCCESS);
        } else {
            ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_INT, MPI_SUM, comm.get()), MPI_SUCCESS);
        }
        ASSERT_EQ(out, ref) << "call " << call;
        ASSERT_TRUE(same_algorithm_everywhere(stats_of(comm.get()).last_algorithm, comm.get())) << "call " << call;
    }
}

// Tuning on some ranks and not on others would plan differently: creating such a communicator fails
// on every rank, and a communicator that tunes alike works.
TEST(Tuning, RanksThatTuneDifferentlyGetAnError) {
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    MPI_Comm parent = MPI_COMM_NULL;  // returns the creation's error instead of aborting
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    SparseComm comm(parent, {{"mpix_sparse_tune", world_rank() == 0 ? "on" : "off"}});
    MPI_Comm_free(&parent);
    ASSERT_NE(comm.rc(), MPI_SUCCESS);
    int cls = -1;
    MPI_Error_class(comm.rc(), &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_INFO);
    EXPECT_EQ(comm.get(), MPI_COMM_NULL);
    const int n = 1 << 16;
    std::vector<float> in(n, 0.0f), out(n, 7.0f);
    in[100] = 1.0f;
    SparseComm good(MPI_COMM_WORLD, {{"mpix_sparse_tune", "on"}});
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, good.get()), MPI_SUCCESS);
    EXPECT_EQ(out[100], static_cast<float>(world_size()));
}

// MPI makes a blocking call meeting a non-blocking one erroneous; with tuning only blocking calls
// explore, so such ranks would plan differently: an error on every rank, not a hang.
TEST(Tuning, BlockingAndNonBlockingCallsThatMeetGetAnError) {
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_tune", "on"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    const int n = 1 << 16;
    std::vector<float> in(n, 0.0f), out(n, 7.0f);
    in[100] = 1.0f;
    int rc = MPI_SUCCESS;
    if (world_rank() == 0) {
        rc = MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm.get());
    } else {
        MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
        rc = MPIX_Sparse_iallreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm.get(), &r);
        if (rc == MPI_SUCCESS) rc = MPIX_Sparse_wait(&r);
    }
    ASSERT_NE(rc, MPI_SUCCESS);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_REMOTE);
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
    EXPECT_EQ(out[100], static_cast<float>(world_size()));
}

// Buffers that peers read in place (MPIX_Sparse_alloc_mem) are a shape of their own for the tuner,
// agreed from every rank's buffers: with them on some ranks only, and which ranks changing from call
// to call, every rank still learns under the same shape and runs the same algorithm.
TEST(Tuning, BuffersReadInPlaceOnSomeRanksOnlyStayExact) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_tune", "on"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    const int n = 1 << 18;
    const auto bytes = static_cast<MPI_Aint>(n * sizeof(float));
    float *shared_in = nullptr, *shared_out = nullptr;
    ASSERT_EQ(MPIX_Sparse_alloc_mem(bytes, MPI_INFO_NULL, &shared_in), MPI_SUCCESS);
    ASSERT_EQ(MPIX_Sparse_alloc_mem(bytes, MPI_INFO_NULL, &shared_out), MPI_SUCCESS);
    const auto free_mem = [](float *p) { MPIX_Sparse_free_mem(p); };
    const std::unique_ptr<float, decltype(free_mem)> keep_in(shared_in, free_mem), keep_out(shared_out, free_mem);
    std::vector<float> heap_in(n, 0.0f), heap_out(n), ref(n);
    for (int i = 0; i < n; ++i)  // every block non-zero: dense and the aggregator both candidates
        heap_in[static_cast<std::size_t>(i)] = static_cast<float>((i + world_rank()) % 7 + 1);
    std::copy(heap_in.begin(), heap_in.end(), shared_in);
    MPI_Allreduce(heap_in.data(), ref.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int call = 0; call < 12; ++call) {
        // Every rank in place at calls 0, 4, 8; none at 2, 6, 10; every other rank at the odd ones.
        const bool in_place = call % 4 == 0 || (call % 2 == 1 && (world_rank() + call / 2) % 2 == 0);
        float *in = in_place ? shared_in : heap_in.data();
        float *out = in_place ? shared_out : heap_out.data();
        std::fill(out, out + n, -1.0f);
        ASSERT_EQ(MPIX_Sparse_allreduce(in, out, n, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
        ASSERT_TRUE(std::equal(out, out + n, ref.begin())) << "call " << call;
        ASSERT_TRUE(same_algorithm_everywhere(stats_of(comm.get()).last_algorithm, comm.get())) << "call " << call;
    }
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
