// Bad input: a registered error class, a clear message, the communicator's error handler called,
// nothing written, and the library still working afterwards.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

int g_handler_calls = 0;
void counting_handler(MPI_Comm *, int *, ...) {
    ++g_handler_calls;
}

class Errors : public ::testing::Test {
  protected:
    void SetUp() override {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
        MPI_Comm_create_errhandler(&counting_handler, &handler_);
        MPI_Comm_set_errhandler(comm_, handler_);
        // Errors about an invalid communicator are raised on MPI_COMM_WORLD.
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_saved_);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler_);
        g_handler_calls = 0;
    }
    void TearDown() override {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_saved_);
        MPI_Errhandler_free(&world_saved_);
        MPI_Comm_free(&comm_);
        MPI_Errhandler_free(&handler_);
    }

    // The code's class, and that its message mentions `words`.
    static void expect_error(int rc, int expected_class, const std::string &words) {
        ASSERT_NE(rc, MPI_SUCCESS);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        EXPECT_EQ(cls, expected_class) << "code " << rc;
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        EXPECT_NE(std::string(text, static_cast<std::size_t>(len)).find(words), std::string::npos)
            << "message: " << std::string(text, static_cast<std::size_t>(len));
    }

    // A correct call on comm_ still works.
    void expect_library_works() {
        std::vector<int> in(70000, 0), out(70000, -1);
        in[5] = 1;
        EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 70000, MPI_INT, MPI_SUM, comm_), MPI_SUCCESS);
        EXPECT_EQ(out[5], world_size());
        EXPECT_EQ(out[6], 0);
    }

    MPI_Comm comm_ = MPI_COMM_NULL;
    MPI_Errhandler handler_ = MPI_ERRHANDLER_NULL, world_saved_ = MPI_ERRHANDLER_NULL;
};

TEST_F(Errors, ClassesAreRegisteredAndDistinct) {
    std::vector<int> classes;
    for (int k = 0; k < MPIX_SPARSE_ERRKIND_COUNT_; ++k)
        classes.push_back(MPIX_Sparse_error_class(k));
    for (std::size_t i = 0; i < classes.size(); ++i) {
        EXPECT_GT(classes[i], MPI_ERR_LASTCODE) << "a class added with MPI_Add_error_class";
        for (std::size_t j = 0; j < i; ++j)
            EXPECT_NE(classes[i], classes[j]);
    }
    EXPECT_EQ(MPIX_Sparse_error_class(-1), MPI_ERR_ARG);
}

TEST_F(Errors, BadArgumentsOfAllreduce) {
    std::vector<float> in(1000, 1.0f), out(1000, 7.0f);
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), -1, MPI_FLOAT, MPI_SUM, comm_), MPIX_ERR_SPARSE_ARG,
                 "count is negative");
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), 1000, MPI_DATATYPE_NULL, MPI_SUM, comm_),
                 MPIX_ERR_SPARSE_ARG, "MPI_DATATYPE_NULL");
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), 1000, MPI_FLOAT, MPI_OP_NULL, comm_), MPIX_ERR_SPARSE_ARG,
                 "MPI_OP_NULL");
    expect_error(MPIX_Sparse_allreduce(nullptr, out.data(), 1000, MPI_FLOAT, MPI_SUM, comm_), MPIX_ERR_SPARSE_ARG,
                 "NULL");
    expect_error(MPIX_Sparse_allreduce(in.data(), nullptr, 1000, MPI_FLOAT, MPI_SUM, comm_), MPIX_ERR_SPARSE_ARG,
                 "NULL");
    expect_error(MPIX_Sparse_allreduce(in.data(), MPI_IN_PLACE, 1000, MPI_FLOAT, MPI_SUM, comm_), MPIX_ERR_SPARSE_ARG,
                 "NULL");
    expect_error(MPIX_Sparse_allreduce(in.data(), in.data() + 10, 500, MPI_FLOAT, MPI_SUM, comm_), MPIX_ERR_SPARSE_ARG,
                 "overlap");
    EXPECT_EQ(g_handler_calls, 7) << "every error goes through the communicator's error handler";
    for (float v : out)
        ASSERT_EQ(v, 7.0f) << "nothing is written on error";
    // Count 0 with null buffers is a valid no-op, as for MPI_Allreduce.
    EXPECT_EQ(MPIX_Sparse_allreduce(nullptr, nullptr, 0, MPI_FLOAT, MPI_SUM, comm_), MPI_SUCCESS);
    expect_library_works();
}

TEST_F(Errors, AllocMemArguments) {
    void *p = reinterpret_cast<void *>(0x1);
    expect_error(MPIX_Sparse_alloc_mem(-1, MPI_INFO_NULL, &p), MPIX_ERR_SPARSE_ARG, "size is negative");
    EXPECT_EQ(p, reinterpret_cast<void *>(0x1)) << "nothing written";
    expect_error(MPIX_Sparse_alloc_mem(64, MPI_INFO_NULL, nullptr), MPIX_ERR_SPARSE_ARG, "baseptr");
    std::vector<int> heap(16);
    expect_error(MPIX_Sparse_free_mem(heap.data()), MPIX_ERR_SPARSE_ARG, "not memory from MPIX_Sparse_alloc_mem");
    EXPECT_EQ(g_handler_calls, 3) << "MPI_COMM_WORLD's handler (comm_'s too), once per error";
    ASSERT_EQ(MPIX_Sparse_alloc_mem(1000, MPI_INFO_NULL, &p), MPI_SUCCESS);
    expect_error(MPIX_Sparse_free_mem(static_cast<char *>(p) + 8), MPIX_ERR_SPARSE_ARG, "MPIX_Sparse_free_mem");
    EXPECT_EQ(MPIX_Sparse_free_mem(p), MPI_SUCCESS) << "still allocated after the bad free";
    expect_error(MPIX_Sparse_free_mem(p), MPIX_ERR_SPARSE_ARG, "freed already");
    EXPECT_EQ(MPIX_Sparse_free_mem(nullptr), MPI_SUCCESS);
    expect_error(MPIX_Sparse_stats_in_place(comm_, nullptr), MPIX_ERR_SPARSE_ARG, "bytes pointer is NULL");
    expect_library_works();
}

TEST_F(Errors, CountsWhoseBytesOverflowTheAddressSpace) {
    std::vector<double> in(4, 1.0), out(4, 7.0);
    const MPI_Count huge = std::numeric_limits<MPI_Count>::max() / 4;  // * 8 bytes overflows
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), huge, MPI_DOUBLE, MPI_SUM, comm_), MPIX_ERR_SPARSE_ARG,
                 "address space");
    MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
    expect_error(MPIX_Sparse_iallreduce(in.data(), out.data(), huge, MPI_DOUBLE, MPI_SUM, comm_, &r),
                 MPIX_ERR_SPARSE_ARG, "address space");
    EXPECT_EQ(r, MPIX_SPARSE_REQUEST_NULL);
    for (double v : out)
        ASSERT_EQ(v, 7.0);
    expect_library_works();
}

// Ranks that pass different counts: every rank gets MPIX_ERR_SPARSE_REMOTE (none waits for the
// others), nothing is written, and the next call works.
TEST_F(Errors, MismatchedCountsAcrossRanks) {
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    const int count = 200000 + world_rank();
    std::vector<float> in(static_cast<std::size_t>(count), 0.0f), out(static_cast<std::size_t>(count), 7.0f);
    in[3] = 1.0f;
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, comm_), MPIX_ERR_SPARSE_REMOTE,
                 "different count");
    expect_library_works();
}

// The element variant with a dense output on rank 0 and a sparse one elsewhere: the ranks would
// plan differently (a sparse output never goes dense), so every rank gets the mismatch instead.
TEST_F(Errors, ElementOutputsThatDifferAcrossRanks) {
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    std::vector<std::int64_t> idx{3, 70000};
    std::vector<float> val{1.0f, 2.0f}, out(100000, 7.0f);
    MPIX_Sparse_vector v = nullptr;
    const int rc =
        world_rank() == 0
            ? MPIX_Sparse_allreduce_elements(2, idx.data(), val.data(), out.data(), 100000, MPI_FLOAT, MPI_SUM, comm_)
            : MPIX_Sparse_allreduce_elements_sparse(2, idx.data(), val.data(), 100000, MPI_FLOAT, MPI_SUM, comm_, &v);
    expect_error(rc, MPIX_ERR_SPARSE_REMOTE, "dense and sparse outputs");
    EXPECT_EQ(v, nullptr);
    if (world_rank() == 0) {
        EXPECT_EQ(out[3], 7.0f) << "nothing written";
    }
    expect_library_works();
}

// Derived datatypes are outside the sparse path: MPI_Allreduce serves them, with the same result.
TEST_F(Errors, DerivedDatatypesGoToTheDensePath) {
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_FLOAT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op op;
    MPI_Op_create(
        [](void *in, void *inout, int *len, MPI_Datatype *) {
            auto *a = static_cast<float *>(in);
            auto *b = static_cast<float *>(inout);
            for (int i = 0; i < 2 * *len; ++i)
                b[i] += a[i];
        },
        1, &op);
    std::vector<float> in(2 * 50000, 0.0f), out(in.size(), 7.0f), ref(in.size());
    in[11] = 1.0f;
    ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 50000, pair, op, comm_), MPI_SUCCESS);
    MPI_Allreduce(in.data(), ref.data(), 50000, pair, op, comm_);
    EXPECT_EQ(out, ref);
    EXPECT_EQ(stats_of(comm_).last_algorithm, MPIX_SPARSE_ALGORITHM_DENSE);
    MPI_Op_free(&op);
    MPI_Type_free(&pair);
    expect_library_works();
}

TEST_F(Errors, BadCommunicators) {
    std::vector<float> in(10, 1.0f), out(10);
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL),
                 MPIX_ERR_SPARSE_COMM, "MPI_COMM_NULL");
    MPI_Comm freed;
    MPI_Comm_dup(MPI_COMM_WORLD, &freed);
    MPI_Comm_free(&freed);  // sets the handle to MPI_COMM_NULL
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, freed), MPIX_ERR_SPARSE_COMM,
                 "communicator");
    expect_error(MPIX_Sparse_stats_get(MPI_COMM_NULL, nullptr), MPIX_ERR_SPARSE_COMM, "MPI_COMM_NULL");
    MPIX_Sparse_stats s;
    expect_error(MPIX_Sparse_stats_get(comm_, nullptr), MPIX_ERR_SPARSE_ARG, "stats");
    EXPECT_EQ(MPIX_Sparse_stats_get(comm_, &s), MPI_SUCCESS);
    // comm_free only takes communicators that comm_create made.
    MPI_Comm plain = comm_;
    expect_error(MPIX_Sparse_comm_free(&plain), MPIX_ERR_SPARSE_COMM, "MPIX_Sparse_comm_create");
    expect_error(MPIX_Sparse_comm_free(nullptr), MPIX_ERR_SPARSE_ARG, "pointer");
    expect_error(MPIX_Sparse_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, nullptr), MPIX_ERR_SPARSE_ARG, "newcomm");
    expect_library_works();
}

TEST_F(Errors, IntercommunicatorIsRejected) {
    const int size = world_size(), rank = world_rank();
    if (size < 2) GTEST_SKIP() << "an intercommunicator needs two groups";
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
    MPI_Comm_set_errhandler(inter, handler_);
    std::vector<float> in(10), out(10);
    expect_error(MPIX_Sparse_allreduce(in.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, inter), MPIX_ERR_SPARSE_COMM,
                 "intercommunicator");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    expect_library_works();
}

TEST_F(Errors, BadInfoValuesNameTheKey) {
    const std::pair<const char *, const char *> bad[] = {{"mpix_sparse_block_size", "0"},
                                                         {"mpix_sparse_block_size", "lots"},
                                                         {"mpix_sparse_aggregators", "-2"},
                                                         {"mpix_sparse_aggregators", "100000"},
                                                         {"mpix_sparse_aggregator_mode", "sideways"},
                                                         {"mpix_sparse_algorithm", "fastest"},
                                                         {"mpix_sparse_placement", "anywhere"},
                                                         {"mpix_sparse_hierarchical", "maybe"},
                                                         {"mpix_sparse_dense_below", "-1"},
                                                         {"mpix_sparse_timeout", "-1"},
                                                         {"mpix_sparse_timeout", "soon"}};
    for (const auto &[key, value] : bad) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value);
        MPI_Comm newcomm = MPI_COMM_WORLD;
        const int rc = MPIX_Sparse_comm_create(comm_, info, &newcomm);
        MPI_Info_free(&info);
        expect_error(rc, MPIX_ERR_SPARSE_INFO, key);
        EXPECT_EQ(newcomm, MPI_COMM_NULL) << key;
    }
    expect_library_works();
}

// Settings that decide a call's collectives, set apart on one rank, would make ranks post different
// collectives: creation fails on every rank instead (before any collective the settings decide), and
// the library keeps working. Rank 0 differs alone, so every other rank holds equal values.
TEST_F(Errors, SettingsSetApartFailCreationOnEveryRank) {
    if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
    const std::pair<const char *, const char *> apart[] = {
        {"mpix_sparse_algorithm", "dense"}, {"mpix_sparse_dense_below", "1048576"},
        {"mpix_sparse_aggregators", "1"},   {"mpix_sparse_aggregator_mode", "dedicated"},
        {"mpix_sparse_hierarchical", "on"}, {"mpix_sparse_timeout", "60"}};
    for (const auto &[key, value] : apart) {
        MPI_Info info;
        MPI_Info_create(&info);
        if (world_rank() == 0) MPI_Info_set(info, key, value);
        MPI_Comm newcomm = MPI_COMM_WORLD;
        const int rc = MPIX_Sparse_comm_create(comm_, info, &newcomm);
        MPI_Info_free(&info);
        expect_error(rc, MPIX_ERR_SPARSE_INFO, "apart");
        EXPECT_EQ(newcomm, MPI_COMM_NULL) << key;
    }
    // What changes a rank alone may differ.
    SparseComm local(comm_, {{"mpix_sparse_profile", world_rank() == 0 ? "on" : "off"}});
    EXPECT_EQ(local.rc(), MPI_SUCCESS);
    expect_library_works();
}

TEST_F(Errors, ElementVariantArguments) {
    std::vector<std::int64_t> idx{0, 3};
    std::vector<float> val{1, 2};
    std::vector<float> out(10, 7.0f);
    expect_error(MPIX_Sparse_allreduce_elements(-1, idx.data(), val.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, comm_),
                 MPIX_ERR_SPARSE_ARG, "nnz is negative");
    expect_error(MPIX_Sparse_allreduce_elements(2, nullptr, val.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, comm_),
                 MPIX_ERR_SPARSE_ARG, "indices or values");
    expect_error(MPIX_Sparse_allreduce_elements(2, idx.data(), val.data(), out.data(), -10, MPI_FLOAT, MPI_SUM, comm_),
                 MPIX_ERR_SPARSE_ARG, "count is negative");
    idx[1] = 10;
    expect_error(MPIX_Sparse_allreduce_elements(2, idx.data(), val.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, comm_),
                 MPIX_ERR_SPARSE_ARG, "index");
    idx[1] = -1;
    expect_error(MPIX_Sparse_allreduce_elements(2, idx.data(), val.data(), out.data(), 10, MPI_FLOAT, MPI_SUM, comm_),
                 MPIX_ERR_SPARSE_ARG, "index");
    idx[1] = 3;
    expect_error(
        MPIX_Sparse_allreduce_elements_sparse(2, idx.data(), val.data(), 10, MPI_FLOAT, MPI_SUM, comm_, nullptr),
        MPIX_ERR_SPARSE_ARG, "result");
    for (float v : out)
        ASSERT_EQ(v, 7.0f) << "nothing is written on error";
    MPIX_Sparse_vector v = nullptr;
    expect_error(MPIX_Sparse_vector_free(&v), MPIX_ERR_SPARSE_ARG, "vector");
    MPI_Count n;
    const std::int64_t *pi;
    const void *pv;
    expect_error(MPIX_Sparse_vector_get(nullptr, &n, &pi, &pv), MPIX_ERR_SPARSE_ARG, "vector");
    expect_library_works();
}

TEST_F(Errors, BadIndexOnOneRankIsReportedEverywhere) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    // Rank 1 passes an index out of range; the others pass valid input. Nobody hangs: rank 1 gets the
    // argument error, the others learn that another rank failed.
    std::vector<std::int64_t> idx{1, rank == 1 ? 1000 : 2};
    std::vector<double> val{1, 1};
    std::vector<double> out(100, 3.0);
    const int rc =
        MPIX_Sparse_allreduce_elements(2, idx.data(), val.data(), out.data(), 100, MPI_DOUBLE, MPI_SUM, comm_);
    if (rank == 1)
        expect_error(rc, MPIX_ERR_SPARSE_ARG, "index");
    else
        expect_error(rc, MPIX_ERR_SPARSE_REMOTE, "another rank");
    for (double v : out)
        ASSERT_EQ(v, 3.0);
    // Same with a negative nnz on one rank, and with the sparse output.
    MPIX_Sparse_vector result = nullptr;
    const int rc2 = MPIX_Sparse_allreduce_elements_sparse(rank == 0 ? -5 : 2, idx.data(), val.data(), 100000,
                                                          MPI_DOUBLE, MPI_SUM, comm_, &result);
    if (rank == 0)
        expect_error(rc2, MPIX_ERR_SPARSE_ARG, "nnz");
    else
        expect_error(rc2, MPIX_ERR_SPARSE_REMOTE, "another rank");
    EXPECT_EQ(result, nullptr);
    expect_library_works();
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
