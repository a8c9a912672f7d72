// A stalled or dead peer gives an error, not a hang (run by faults.sh under mpirun, 3+ ranks; rank 1
// misbehaves). Scenarios (argv[1]):
//   skip  rank 1 does not make the call; the others return MPIX_ERR_SPARSE_TIMEOUT within timeout + 2 s
//         naming rank 1, a second call on the same communicator fails at once, and a communicator
//         that rank 1 still serves keeps working; then every rank frees and finalizes.
//   stop  rank 1 raises SIGSTOP on itself after its first contribution; the others time out as above;
//         rank 0 then wakes it (SIGCONT), it times out too, and everyone finalizes.
//   exit  rank 1 _exit(0)s after its first contribution; with no timeout set, the others return
//         MPIX_ERR_SPARSE_TRANSPORT promptly (the peer is gone), then call MPI_Abort (MPI cannot
//         finalize with a dead process).
// Each surviving rank prints "rank R: ok" or "rank R: FAIL ..." and writes its lines to REPORT_DIR/rank.R
// (argv[2]), which faults.sh checks: a launcher may drop output still in flight when MPI_Abort ends
// the job (MPICH's hydra did, 1 run in 15), so the file is written and closed before anyone aborts.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mpix_sparse/mpix_sparse.h"

namespace {

constexpr double kTimeout = 2.0;
constexpr std::int64_t kCount = 1 << 20;

// One rank's report lines: to stdout for the log and to a file that outlives an abort.
class Report {
  public:
    Report(const char *dir, int rank) : rank_(rank) {
        if (dir != nullptr) file_ = std::fopen((std::string(dir) + "/rank." + std::to_string(rank)).c_str(), "w");
    }
    ~Report() { close(); }
    Report(const Report &) = delete;
    Report &operator=(const Report &) = delete;
    void line(const std::string &text) {
        std::printf("rank %d: %s\n", rank_, text.c_str());
        std::fflush(stdout);
        if (file_ != nullptr) std::fprintf(file_, "rank %d: %s\n", rank_, text.c_str());
    }
    void close() {
        if (file_ != nullptr) std::fclose(file_);
        file_ = nullptr;
    }

  private:
    int rank_;
    std::FILE *file_ = nullptr;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Outcome {
    int rc = MPI_SUCCESS;
    double seconds = 0;
    std::string text;
    int error_class() const {
        int c = MPI_SUCCESS;
        MPI_Error_class(rc, &c);
        return c;
    }
};

Outcome allreduce(MPI_Comm comm, std::vector<float> &data) {
    const auto t0 = std::chrono::steady_clock::now();
    Outcome o;
    o.rc = MPIX_Sparse_allreduce(MPI_IN_PLACE, data.data(), kCount, MPI_FLOAT, MPI_SUM, comm);
    o.seconds = seconds_since(t0);
    if (o.rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(o.rc, text, &len);
        o.text.assign(text, static_cast<std::size_t>(len));
    }
    return o;
}

MPI_Comm make_comm(const std::vector<std::pair<const char *, std::string>> &keys) {
    MPI_Info info;
    MPI_Info_create(&info);
    for (const auto &[k, v] : keys)
        MPI_Info_set(info, k, v.c_str());
    MPI_Comm comm = MPI_COMM_NULL;
    MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return comm;
}

// 1% of the blocks non-zero, so the aggregators' stream runs.
std::vector<float> input(int rank) {
    std::vector<float> v(kCount, 0.0f);
    for (std::int64_t i = rank; i < kCount; i += 100 * 256)
        v[static_cast<std::size_t>(i)] = 1.0f;
    return v;
}

std::string check_timeout(const Outcome &o, int expected_class, double limit, const char *what) {
    std::string problems;
    if (o.rc == MPI_SUCCESS) return std::string(what) + " succeeded; ";
    if (o.error_class() != expected_class)
        problems += std::string(what) + " gave class " + std::to_string(o.error_class()) + " (" + o.text + "); ";
    if (o.seconds > limit) problems += std::string(what) + " took " + std::to_string(o.seconds) + " s; ";
    return problems;
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const std::string scenario = argc > 1 ? argv[1] : "skip";
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Report report(argc > 2 ? argv[2] : nullptr, rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    std::vector<int> pids(static_cast<std::size_t>(size));
    const int pid = static_cast<int>(getpid());
    MPI_Allgather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, MPI_COMM_WORLD);

    const std::string timeout = scenario == "exit" ? "0" : std::to_string(kTimeout);
    std::vector<std::pair<const char *, std::string>> keys{
        {"mpix_sparse_timeout", timeout}, {"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}};
    if (rank == 1 && scenario != "skip") keys.push_back({"mpix_sparse_test_fail", scenario});
    // Ranks 0 and 2: in the exit scenario they wait for each other's reports before MPI_Abort (some
    // launchers kill everyone at the first abort); in the stop scenario, for each other's timeout.
    MPI_Comm survivors = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 1 ? MPI_UNDEFINED : 0, rank, &survivors);
    MPI_Comm broken = make_comm(keys);
    MPI_Comm healthy = make_comm({{"mpix_sparse_timeout", "0"}});
    std::vector<float> data = input(rank);
    std::string problems;

    if (scenario == "skip") {
        if (rank == 1) {
            std::this_thread::sleep_for(std::chrono::duration<double>(kTimeout + 4));
        } else {
            const Outcome first = allreduce(broken, data);
            problems += check_timeout(first, MPIX_ERR_SPARSE_TIMEOUT, kTimeout + 2, "the call rank 1 skipped");
            if (first.text.find("rank(s) 1 ") == std::string::npos)
                problems += "the error does not name rank 1: " + first.text + "; ";
            const Outcome again = allreduce(broken, data);
            problems += check_timeout(again, MPIX_ERR_SPARSE_TIMEOUT, 0.5, "the next call on the broken communicator");
            report.line("first error after " + std::to_string(first.seconds) + " s: " + first.text);
        }
    } else if (scenario == "stop") {
        const Outcome first = allreduce(broken, data);
        if (rank == 1) {
            // Woken after its peers gave up: it times out as well.
            problems += check_timeout(first, MPIX_ERR_SPARSE_TIMEOUT, 60, "the resumed rank's call");
        } else {
            problems += check_timeout(first, MPIX_ERR_SPARSE_TIMEOUT, kTimeout + 2, "the call rank 1 stopped in");
            if (first.text.find("rank(s) 1 ") == std::string::npos)
                problems += "the error does not name rank 1: " + first.text + "; ";
            report.line("error after " + std::to_string(first.seconds) + " s: " + first.text);
        }
        // Woken only when both others gave up: a rank 1 resumed earlier sends again, which restarts
        // the watchdog of a rank still waiting, and that rank then finds everyone waiting and cannot
        // name rank 1 (failed 1 run in 8).
        if (survivors != MPI_COMM_NULL) MPI_Barrier(survivors);
        if (rank == 0) kill(static_cast<pid_t>(pids[1]), SIGCONT);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (scenario == "exit") {
        const Outcome first = allreduce(broken, data);
        problems += check_timeout(first, MPIX_ERR_SPARSE_TRANSPORT, 5, "the call rank 1 died in");
        report.line("error after " + std::to_string(first.seconds) + " s: " + first.text);
        report.line(problems.empty() ? "ok" : "FAIL " + problems);
        report.close();
        MPI_Barrier(survivors);
        // A dead process: MPI_Finalize would wait for it. Leave as MPI allows.
        MPI_Abort(MPI_COMM_WORLD, problems.empty() ? 0 : 1);
    }
    // The communicator that every rank still serves works, then both are freed without hanging.
    std::vector<float> ones(kCount, 1.0f);
    const Outcome after = allreduce(healthy, ones);
    if (after.rc != MPI_SUCCESS || ones[0] != static_cast<float>(size))
        problems += "the healthy communicator failed: " + after.text + "; ";
    const auto t0 = std::chrono::steady_clock::now();
    MPIX_Sparse_comm_free(&broken);
    MPIX_Sparse_comm_free(&healthy);
    if (survivors != MPI_COMM_NULL) MPI_Comm_free(&survivors);
    if (seconds_since(t0) > 5) problems += "freeing took " + std::to_string(seconds_since(t0)) + " s; ";
    report.line(problems.empty() ? "ok" : "FAIL " + problems);
    report.close();
    MPI_Finalize();
    return problems.empty() ? 0 : 1;
}
