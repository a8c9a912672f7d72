// Calls from several threads (MPI_THREAD_MULTIPLE): two threads, each calling on its own
// communicator, entering them in opposite orders on different ranks. This is a legal MPI program;
// a library lock held across a call's collective waits would deadlock it (rank 0 holds the lock in
// A waiting for rank 1, which holds it in B waiting for rank 0). A watchdog turns a hang into a
// failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sys/resource.h>
#include <thread>
#include <vector>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

class Watchdog {
  public:
    explicit Watchdog(std::chrono::seconds limit)
        : thread_([this, limit] {
              std::unique_lock<std::mutex> lock(m_);
              if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
                  std::fprintf(stderr, "[rank %d] threads test hung for %lld s: aborting\n", world_rank(),
                               static_cast<long long>(limit.count()));
                  MPI_Abort(MPI_COMM_WORLD, 3);
              }
          }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(m_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

struct Workload {
    std::vector<float> sparse_in, sparse_want;  // aggregator path
    std::vector<float> dense_in, dense_want;    // small: MPI_Allreduce path
};

Workload make_workload(MPI_Comm comm, unsigned seed) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    Workload w;
    const std::size_t count = 300000;
    const auto on = block_pattern(Pattern::Random, (count + 255) / 256, 0.05, rank, size, seed);
    const auto bytes = make_vector(ElementType::F32, count, 256, on, seed + static_cast<unsigned>(rank));
    w.sparse_in.resize(count);
    std::memcpy(w.sparse_in.data(), bytes.data(), bytes.size());
    w.sparse_want.resize(count);
    MPI_Allreduce(w.sparse_in.data(), w.sparse_want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
    w.dense_in.assign(1000, static_cast<float>(rank + 1));
    w.dense_want.resize(1000);
    MPI_Allreduce(w.dense_in.data(), w.dense_want.data(), 1000, MPI_FLOAT, MPI_SUM, comm);
    return w;
}

// Calls alternate between the streamed path and the dense path (which MPI serves). Returns the
// number of calls that failed or gave a wrong result.
int run_calls(MPI_Comm comm, const Workload &w, int calls) {
    int bad = 0;
    std::vector<float> out;
    for (int i = 0; i < calls; ++i) {
        const bool sparse = i % 2 == 0;
        const auto &in = sparse ? w.sparse_in : w.dense_in;
        out.assign(in.size(), -1.0f);
        const int rc =
            MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_FLOAT, MPI_SUM, comm);
        if (rc != MPI_SUCCESS || out != (sparse ? w.sparse_want : w.dense_want)) ++bad;
    }
    return bad;
}

TEST(Threads, TwoThreadsTwoCommunicatorsInOppositeOrders) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP() << "opposite orders need two ranks";
    const std::vector<std::pair<std::string, std::string>> keys{{"mpix_sparse_algorithm", "auto"},
                                                                {"mpix_sparse_dense_below", "4096"}};
    SparseComm a(MPI_COMM_WORLD, keys), b(MPI_COMM_WORLD, keys);
    ASSERT_EQ(a.rc(), MPI_SUCCESS);
    ASSERT_EQ(b.rc(), MPI_SUCCESS);
    const Workload wa = make_workload(a.get(), 1), wb = make_workload(b.get(), 2);
    std::atomic<int> bad{0};
    {
        Watchdog watchdog(std::chrono::seconds(60));
        // Even ranks enter A first, odd ranks B first: each thread's first call waits for a peer
        // whose other thread is inside the other communicator.
        auto thread_for = [&](MPI_Comm comm, const Workload &w, bool first) {
            return std::thread([&, comm, first] {
                if (!first) std::this_thread::sleep_for(std::chrono::milliseconds(50));
                bad += run_calls(comm, w, 20);
            });
        };
        std::thread ta = thread_for(a.get(), wa, rank % 2 == 0);
        std::thread tb = thread_for(b.get(), wb, rank % 2 == 1);
        ta.join();
        tb.join();
    }
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(everywhere(bad.load() == 0));
}

TEST(Threads, ManyCommunicatorsFromManyThreads) {
    const int size = world_size();
    if (size < 2) GTEST_SKIP();
    // Four threads, four communicators, each thread its own; every rank starts them all at once.
    constexpr int kThreads = 4;
    std::vector<std::unique_ptr<SparseComm>> comms;
    std::vector<Workload> work;
    for (int t = 0; t < kThreads; ++t) {
        comms.push_back(std::make_unique<SparseComm>(
            MPI_COMM_WORLD, std::vector<std::pair<std::string, std::string>>{{"mpix_sparse_dense_below", "4096"}}));
        work.push_back(make_workload(comms.back()->get(), 10 + static_cast<unsigned>(t)));
    }
    std::atomic<int> bad{0};
    {
        Watchdog watchdog(std::chrono::seconds(60));
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                bad += run_calls(comms[static_cast<std::size_t>(t)]->get(), work[static_cast<std::size_t>(t)], 10);
            });
        for (auto &th : threads)
            th.join();
    }
    EXPECT_EQ(bad.load(), 0);
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

TEST(Threads, ProgressThreadAdvancesWhileTheCallerComputesAndSleepsWhenIdle) {
    const int rank = world_rank(), size = world_size();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_progress_thread", "on"}, {"mpix_sparse_dense_below", "0"}});
    const Workload w = make_workload(comm.get(), 21);
    std::vector<float> out(w.sparse_in.size(), -1.0f);
    MPIX_Sparse_request request = MPIX_SPARSE_REQUEST_NULL;
    ASSERT_EQ(MPIX_Sparse_iallreduce(w.sparse_in.data(), out.data(), static_cast<MPI_Count>(out.size()), MPI_FLOAT,
                                     MPI_SUM, comm.get(), &request),
              MPI_SUCCESS);
    // "Compute" without calling the library: only the progress threads can advance the operation.
    std::this_thread::sleep_for(std::chrono::milliseconds(size > 1 ? 500 : 50));
    int flag = 0;
    EXPECT_EQ(MPIX_Sparse_test(&request, &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 1) << "rank " << rank << ": the operation did not advance while the caller computed";
    if (!flag) {
        EXPECT_EQ(MPIX_Sparse_wait(&request), MPI_SUCCESS);
    }
    EXPECT_EQ(out, w.sparse_want);
    // Idle: nothing in flight, the thread sleeps (this process uses far less than one core).
    MPI_Barrier(MPI_COMM_WORLD);
    const double cpu0 = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const double idle_cpu = cpu_seconds() - cpu0;
    EXPECT_LT(idle_cpu, 0.05) << "CPU seconds used in 0.3 s of idle time";
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
