#include "library_stats.h"

#include "bench_context.h"

#include <mpix_sparse/mpix_sparse.h>

#include <cstdio>

namespace bench {

StatsSummary summarize_stats(MPI_Comm lib_comm, MPI_Comm base_comm, std::int64_t expected_calls) {
    MPIX_Sparse_stats st{};
    check_mpi(MPIX_Sparse_stats_get(lib_comm, &st), "MPIX_Sparse_stats_get");
    int nranks = 1, rank = 0;
    MPI_Comm_size(base_comm, &nranks);
    MPI_Comm_rank(base_comm, &rank);

    const auto calls = static_cast<std::int64_t>(st.calls);
    if (calls != expected_calls) {
        std::fprintf(stderr, "# STATS MISMATCH on rank %d: MPIX_Sparse_stats.calls = %lld after %lld timed calls\n",
                     rank, static_cast<long long>(calls), static_cast<long long>(expected_calls));
        std::fflush(stderr);
    }
    const double per_call = calls > 0 ? 1.0 / static_cast<double>(calls) : 0.0;
    double sums[2] = {static_cast<double>(st.bytes_sent) * per_call, static_cast<double>(st.bytes_received) * per_call};
    double sent_max = sums[0];
    std::int64_t fallbacks = static_cast<std::int64_t>(st.dense_fallbacks);
    std::int64_t calls_min = calls, calls_max = calls;
    int algo_min = st.last_algorithm, algo_max = st.last_algorithm;
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &sent_max, 1, MPI_DOUBLE, MPI_MAX, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &fallbacks, 1, MPI_INT64_T, MPI_SUM, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &calls_min, 1, MPI_INT64_T, MPI_MIN, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &calls_max, 1, MPI_INT64_T, MPI_MAX, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &algo_min, 1, MPI_INT, MPI_MIN, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &algo_max, 1, MPI_INT, MPI_MAX, base_comm);

    StatsSummary s;
    s.calls_min = calls_min;
    s.calls_max = calls_max;
    s.calls_match = calls_min == expected_calls && calls_max == expected_calls;
    s.sent_per_call_mean = sums[0] / nranks;
    s.received_per_call_mean = sums[1] / nranks;
    s.sent_per_call_max = sent_max;
    s.dense_fallbacks = fallbacks;
    s.algorithm = algo_min == algo_max ? algo_min : -1;
    return s;
}

ProfileSummary summarize_profile(MPI_Comm lib_comm, MPI_Comm base_comm) {
    MPIX_Sparse_profile p{};
    check_mpi(MPIX_Sparse_profile_get(lib_comm, &p), "MPIX_Sparse_profile_get");
    int nranks = 1;
    MPI_Comm_size(base_comm, &nranks);
    const double per_call_us = p.calls > 0 ? 1e6 / static_cast<double>(p.calls) : 0.0;
    double v[9] = {p.scan,   p.agreement,    p.dense,   p.allgather,     p.stream,
                   p.reduce, p.result_write, p.barrier, p.node_broadcast};
    for (double &x : v)
        x *= per_call_us / nranks;
    std::int64_t calls_min = static_cast<std::int64_t>(p.calls);
    MPI_Allreduce(MPI_IN_PLACE, v, 9, MPI_DOUBLE, MPI_SUM, base_comm);
    MPI_Allreduce(MPI_IN_PLACE, &calls_min, 1, MPI_INT64_T, MPI_MIN, base_comm);
    ProfileSummary s;
    s.calls_min = calls_min;
    s.scan_us = v[0];
    s.agreement_us = v[1];
    s.dense_us = v[2];
    s.allgather_us = v[3];
    s.stream_us = v[4];
    s.reduce_us = v[5];
    s.result_write_us = v[6];
    s.barrier_us = v[7];
    s.node_broadcast_us = v[8];
    return s;
}

const char *algorithm_name(int algorithm) {
    switch (algorithm) {
    case MPIX_SPARSE_ALGORITHM_DENSE: return "dense";
    case MPIX_SPARSE_ALGORITHM_AGGREGATOR: return "aggregator";
    case MPIX_SPARSE_ALGORITHM_ALLGATHER: return "allgather";
    case -1: return "mixed";
    }
    return "unknown";
}

int last_algorithm(MPI_Comm lib_comm) {
    MPIX_Sparse_stats s{};
    check_mpi(MPIX_Sparse_stats_get(lib_comm, &s), "MPIX_Sparse_stats_get");
    return s.last_algorithm;
}

}  // namespace bench
