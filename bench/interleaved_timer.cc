#include "interleaved_timer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>

#include <sys/resource.h>

namespace bench {

InterleavedResult run_interleaved(const std::vector<TimedMethod> &methods, int warmup, int iterations,
                                  double time_limit, MPI_Comm comm, const std::function<void()> &before_timed) {
    const std::size_t n = methods.size();
    std::vector<long> faults(n, 0);
    std::vector<double> calls;  // [method][iteration] in seconds, sized once the count is known

    // Each iteration runs the methods in a fresh order (the same on every rank: seeded by the
    // iteration), so no method always follows the same one. A fixed cyclic order made the method
    // after MPI_Allreduce pay for the caches it emptied every time: two communicators running the
    // same algorithm read 0.70-1.84 apart at 256 KiB-4 MiB (docs/performance.md).
    std::vector<std::size_t> order(n);
    auto iteration = [&](int it, bool timed) {
        for (std::size_t j = 0; j < n; ++j)
            order[j] = j;
        std::mt19937 rng(static_cast<std::uint32_t>(it) * 2654435761u + 1u);
        for (std::size_t j = n; j > 1; --j)  // Fisher-Yates, not std::shuffle: the same on every library
            std::swap(order[j - 1], order[rng() % j]);
        for (std::size_t j = 0; j < n; ++j) {
            const std::size_t m = order[j];
            rusage before{}, after{};  // read outside the timed interval (a system call each)
            getrusage(RUSAGE_SELF, &before);
            MPI_Barrier(comm);
            const double t0 = MPI_Wtime();
            methods[m].call();
            const double t1 = MPI_Wtime();
            getrusage(RUSAGE_SELF, &after);
            if (timed) {
                calls[m * static_cast<std::size_t>(iterations) + static_cast<std::size_t>(it)] = t1 - t0;
                faults[m] += after.ru_minflt - before.ru_minflt;
                if (methods[m].after_timed) methods[m].after_timed();
            }
        }
    };

    const double warm_start = MPI_Wtime();
    for (int it = 0; it < warmup; ++it)
        iteration(it, false);
    if (warmup > 0 && time_limit > 0) {
        // All ranks must agree on the count, so the slowest rank's estimate decides.
        double per_iteration = (MPI_Wtime() - warm_start) / warmup;
        MPI_Allreduce(MPI_IN_PLACE, &per_iteration, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (per_iteration * iterations > time_limit)
            iterations = std::max(1, static_cast<int>(std::floor(time_limit / per_iteration)));
    }

    calls.assign(n * static_cast<std::size_t>(iterations), 0.0);
    before_timed();
    for (int it = 0; it < iterations; ++it)
        iteration(it, true);

    InterleavedResult result;
    result.iterations = iterations;
    int nranks = 1;
    MPI_Comm_size(comm, &nranks);
    std::vector<double> calls_sum(calls.size(), 0.0);
    MPI_Reduce(calls.data(), calls_sum.data(), static_cast<int>(calls.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
    for (std::size_t m = 0; m < n; ++m) {
        const auto method_calls = calls.begin() + static_cast<std::ptrdiff_t>(m * static_cast<std::size_t>(iterations));
        const double mean_us = std::accumulate(method_calls, method_calls + iterations, 0.0) * 1e6 / iterations;
        LatencySummary s;
        MPI_Reduce(&mean_us, &s.avg_us, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
        MPI_Reduce(&mean_us, &s.min_us, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
        MPI_Reduce(&mean_us, &s.max_us, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
        s.avg_us /= nranks;
        const double faults_per_call = static_cast<double>(faults[m]) / iterations;
        MPI_Reduce(&faults_per_call, &s.faults_per_call, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
        s.faults_per_call /= nranks;
        for (int it = 0; it < iterations; ++it)
            s.calls_us.push_back(calls_sum[m * static_cast<std::size_t>(iterations) + static_cast<std::size_t>(it)] *
                                 1e6 / nranks);
        result.latency.push_back(s);
    }
    return result;
}

}  // namespace bench
