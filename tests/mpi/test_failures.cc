// One rank's failure must not hang the others: a failure injected on one rank at each phase of a
// call (before the agreement, mid-stream at a worker or an aggregator, at a result, a malformed
// message, an exception thrown inside a step, out of memory for its stream as it starts, which
// once broke its communicator and left the peers waiting) reaches every rank of the call, which all return
// within a second; the communicator then works again. A failed set-up fails every rank's too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

constexpr double kWithin = 1.0;  // seconds every rank may take to return from a failed call

std::vector<float> test_vector(std::size_t count, int rank, int ranks, unsigned seed) {
    const auto on = block_pattern(Pattern::Random, (count + 255) / 256, 0.2, rank, ranks, seed);
    const auto bytes = make_vector(ElementType::F32, count, 256, on, seed + static_cast<unsigned>(rank));
    std::vector<float> v(count);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

struct Outcome {
    int rc;
    double seconds;  // the slowest rank's
};

Outcome timed_call(MPI_Comm comm, const std::vector<float> &in, std::vector<float> &out) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    const int rc =
        MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_FLOAT, MPI_SUM, comm);
    double dt = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
    return {rc, dt};
}

struct Phase {
    const char *name;
    int failing_class;      // what the failing rank gets
    bool peers_may_finish;  // peers that already hold every result may return success
};

TEST(Failures, OneRankFailsAtEachPhaseAndNobodyWaits) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP() << "needs a peer to fail";
    const int failing = size - 1;
    const Phase phases[] = {
        {"scan", MPIX_ERR_SPARSE_INTERN, false},         {"contribution", MPIX_ERR_SPARSE_INTERN, false},
        {"aggregate", MPIX_ERR_SPARSE_INTERN, false},    {"result", MPIX_ERR_SPARSE_INTERN, true},
        {"throw", MPIX_ERR_SPARSE_INTERN, false},        {"corrupt", MPIX_ERR_SPARSE_REMOTE, false},
        {"stream_memory", MPIX_ERR_SPARSE_INTERN, false}};
    const std::size_t count = 400000;
    const auto in = test_vector(count, rank, size, 3);
    std::vector<float> want(count);
    MPI_Allreduce(in.data(), want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (const Phase &phase : phases) {
        std::vector<std::pair<std::string, std::string>> keys{{"mpix_sparse_algorithm", "aggregator"},
                                                              {"mpix_sparse_dense_below", "0"}};
        if (rank == failing) keys.emplace_back("mpix_sparse_test_fail", phase.name);
        SparseComm comm(MPI_COMM_WORLD, keys);
        ASSERT_EQ(comm.rc(), MPI_SUCCESS);
        // Twice: the communicator's state survives the first failure (sequence numbers still agree).
        for (int attempt = 0; attempt < 2; ++attempt) {
            std::vector<float> out(count, -1.0f);
            const Outcome o = timed_call(comm.get(), in, out);
            EXPECT_LT(o.seconds, kWithin) << phase.name << ": the slowest rank took " << o.seconds << " s";
            const int cls = class_of(o.rc);
            if (rank == failing) {
                EXPECT_EQ(cls, phase.failing_class) << phase.name;
            } else if (phase.peers_may_finish && o.rc == MPI_SUCCESS) {
                EXPECT_EQ(out, want) << phase.name << ": a peer that returned success has the whole result";
            } else {
                // The rank that received a corrupted message reports the protocol violation.
                const bool protocol = std::string(phase.name) == "corrupt" && cls == MPIX_ERR_SPARSE_PROTOCOL;
                EXPECT_TRUE(cls == MPIX_ERR_SPARSE_REMOTE || protocol)
                    << phase.name << ": rank " << rank << " got class " << cls;
            }
        }
        // Every rank saw a failure: not all succeeded.
        int failed = rank == failing ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        EXPECT_EQ(failed, 1);
    }
    // The library still serves correct calls, on a fresh communicator and on the default state.
    SparseComm clean(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    std::vector<float> out(count);
    EXPECT_EQ(timed_call(clean.get(), in, out).rc, MPI_SUCCESS);
    EXPECT_EQ(out, want);
    EXPECT_EQ(timed_call(MPI_COMM_WORLD, in, out).rc, MPI_SUCCESS);
    EXPECT_EQ(out, want);
}

// A rank whose own transport set-up fails (UCX, memory) fails every rank's MPIX_Sparse_comm_create:
// it once left at once, and its peers waited in the set-up's next collective for good (a hang).
TEST(Failures, TransportSetUpFailsOnOneRankAndEveryRankReturns) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP() << "needs a peer to fail";
    const int failing = size - 1;
    MPI_Errhandler world_saved;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_saved);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // comm_create raises errors there
    for (const char *mode : {"colocated", "dedicated"}) {
        std::vector<std::pair<std::string, std::string>> keys{{"mpix_sparse_aggregator_mode", mode},
                                                              {"mpix_sparse_placement", "packed"}};
        if (rank == failing) keys.emplace_back("mpix_sparse_test_fail", "connect");
        SparseComm comm(MPI_COMM_WORLD, keys);
        EXPECT_EQ(comm.get(), MPI_COMM_NULL) << mode;
        EXPECT_EQ(class_of(comm.rc()), rank == failing ? MPIX_ERR_SPARSE_INTERN : MPIX_ERR_SPARSE_REMOTE)
            << mode << " rank " << rank;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_saved);
    MPI_Errhandler_free(&world_saved);
    // The library still serves correct calls.
    const auto in = test_vector(200000, rank, size, 9);
    std::vector<float> want(in.size()), out(in.size());
    MPI_Allreduce(in.data(), want.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    SparseComm clean(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    ASSERT_EQ(clean.rc(), MPI_SUCCESS);
    EXPECT_EQ(timed_call(clean.get(), in, out).rc, MPI_SUCCESS);
    EXPECT_EQ(out, want);
}

TEST(Failures, DedicatedAggregatorFailureReachesTheWorkers) {
    const int rank = world_rank(), size = world_size();
    if (size < 3) GTEST_SKIP() << "needs an aggregator and two workers (one worker reduces alone)";
    // Rank 0 is the aggregator (packed placement); it fails at the first contribution of every call.
    for (const char *who : {"aggregator", "worker"}) {
        const bool aggregator_fails = std::string(who) == "aggregator";
        std::vector<std::pair<std::string, std::string>> keys{{"mpix_sparse_aggregator_mode", "dedicated"},
                                                              {"mpix_sparse_placement", "packed"},
                                                              {"mpix_sparse_algorithm", "aggregator"},
                                                              {"mpix_sparse_dense_below", "0"}};
        const int failing = aggregator_fails ? 0 : size - 1;
        if (rank == failing)
            keys.emplace_back("mpix_sparse_test_fail", aggregator_fails ? "aggregate" : "contribution");
        SparseComm comm(MPI_COMM_WORLD, keys);
        ASSERT_EQ(comm.rc(), MPI_SUCCESS);
        if (comm.get() == MPI_COMM_NULL) continue;  // the aggregator served until the workers left
        int wsize, wrank;
        MPI_Comm_size(comm.get(), &wsize);
        MPI_Comm_rank(comm.get(), &wrank);
        // Large enough that a worker's stream takes several messages: one that stops after its first
        // cannot have let the aggregator finish.
        const auto in = test_vector(1 << 20, wrank, wsize, 5);
        for (int call = 0; call < 3; ++call) {
            std::vector<float> out(in.size());
            const Outcome o = timed_call(comm.get(), in, out);
            EXPECT_LT(o.seconds, kWithin) << who << " call " << call;
            const int cls = class_of(o.rc);
            if (rank == failing)
                EXPECT_EQ(cls, MPIX_ERR_SPARSE_INTERN) << who;
            else
                EXPECT_EQ(cls, MPIX_ERR_SPARSE_REMOTE) << who << " call " << call << " rank " << rank;
        }
    }
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
