// The library's own counters over the timed calls of one row, summarized across ranks.
#ifndef MPIX_SPARSE_BENCH_LIBRARY_STATS_H
#define MPIX_SPARSE_BENCH_LIBRARY_STATS_H

#include <mpi.h>

#include <cstdint>

namespace bench {

struct StatsSummary {
    bool calls_match = true;  // every rank counted exactly the timed calls
    std::int64_t calls_min = 0, calls_max = 0;
    double sent_per_call_mean = 0;  // bytes_sent / calls, mean over ranks
    double sent_per_call_max = 0;   // the busiest rank (an aggregator)
    double received_per_call_mean = 0;
    std::int64_t dense_fallbacks = 0;  // summed over ranks
    int algorithm = -1;                // last_algorithm if all ranks agree, else -1
};

// Reads MPIX_Sparse_stats_get on lib_comm and reduces over base_comm (collective; same result on
// all ranks). Ranks whose call count differs from expected_calls print why to stderr.
StatsSummary summarize_stats(MPI_Comm lib_comm, MPI_Comm base_comm, std::int64_t expected_calls);

const char *algorithm_name(int algorithm);

// The MPIX_SPARSE_ALGORITHM_* of lib_comm's last call (local).
int last_algorithm(MPI_Comm lib_comm);

// MPIX_Sparse_profile per timed call in microseconds, mean over ranks (collective over base_comm).
struct ProfileSummary {
    std::int64_t calls_min = 0;  // calls profiled on the rank that profiled fewest
    double scan_us = 0, agreement_us = 0, dense_us = 0, allgather_us = 0, stream_us = 0, reduce_us = 0,
           result_write_us = 0, barrier_us = 0, node_broadcast_us = 0;
};
ProfileSummary summarize_profile(MPI_Comm lib_comm, MPI_Comm base_comm);

}  // namespace bench

#endif
