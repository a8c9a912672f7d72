// OSU-style latency measurement of several methods at once: every call is preceded by MPI_Barrier
// and timed alone with MPI_Wtime, and the methods alternate call by call (in a different order each
// iteration, the same on every rank), so clock drift, noise and cache state hit all of them alike.
#ifndef MPIX_SPARSE_BENCH_INTERLEAVED_TIMER_H
#define MPIX_SPARSE_BENCH_INTERLEAVED_TIMER_H

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

namespace bench {

struct TimedMethod {
    std::string name;
    std::function<void()> call;
    // Called after each timed call, outside its interval (e.g. to record what the call did); may be empty.
    std::function<void()> after_timed = {};
};

// Across ranks, of each rank's mean latency over the timed iterations (valid on rank 0).
struct LatencySummary {
    double avg_us = 0;
    double min_us = 0;
    double max_us = 0;
    // Minor page faults per timed call, mean over ranks: a method that maps fresh memory in every call
    // (MPI_Allreduce's temporary buffer at large sizes) pays for it here, and on a VM that can dominate.
    double faults_per_call = 0;
    // Each timed call's time, mean over ranks, in order: calls of different methods made in the same
    // iteration were made moments apart, so they can be compared in pairs (bench/scripts/planner_table.py).
    std::vector<double> calls_us;
};

struct InterleavedResult {
    int iterations = 0;                   // timed iterations actually run (all methods alike)
    std::vector<LatencySummary> latency;  // per method, in the order given
};

// Runs `warmup` untimed iterations, then calls before_timed (e.g. to reset counters), then
// `iterations` timed ones, fewer if the warm-up predicts more than time_limit seconds (0: no limit).
// Collective over comm.
InterleavedResult run_interleaved(const std::vector<TimedMethod> &methods, int warmup, int iterations,
                                  double time_limit, MPI_Comm comm, const std::function<void()> &before_timed);

}  // namespace bench

#endif
