// GoogleTest main for tests that run on every rank under mpirun. All ranks run the same tests in the
// same order (tests are collective; the threads tests' main asks for MPI_THREAD_MULTIPLE); rank 0 prints the usual
// report, other ranks print only their failures, and every rank exits with the combined result.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#ifdef MPIX_SPARSE_TEST_NEEDS_DEVICE
#include "core/device_memory.h"
#endif

namespace {

class FailuresOnly : public ::testing::EmptyTestEventListener {
  public:
    explicit FailuresOnly(int rank) : rank_(rank) {}
    void OnTestPartResult(const ::testing::TestPartResult &r) override {
        if (r.failed())
            std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                         r.summary());
    }

  private:
    int rank_;
};

}  // namespace

int main(int argc, char **argv) {
#ifdef MPIX_SPARSE_TEST_THREAD_MULTIPLE
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        std::fprintf(stderr, "MPI_THREAD_MULTIPLE is not provided: skipped\n");
        MPI_Finalize();
        return 77;
    }
#else
    MPI_Init(&argc, &argv);
#endif
#ifdef MPIX_SPARSE_TEST_NEEDS_DEVICE
    // Device tests: skipped (on every rank alike) where no rank has a device backend.
    int have = mpix::sparse::detail::device_memory() != nullptr ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (have == 0) {
        std::fprintf(stderr, "no device backend (no GPU, or built without CUDA): skipped\n");
        MPI_Finalize();
        return 77;
    }
#endif
    ::testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new FailuresOnly(rank));
    }
    int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed;
}
