// Machine constants of the cost model (core/planner.h, docs/architecture.md). The defaults were fitted
// with bench/calibrate_cost_model and checked with the OSU-style sweep on the reference machine (a
// 2-core EPYC VM, 4 ranks, Open MPI 4.1 shared memory, UCX 1.13 shared memory); MPIX_SPARSE_COST_*
// environment variables override them.
#pragma once

namespace mpix::sparse::detail {

struct CostParams {
    // Dense MPI_Allreduce: latency (µs) and ns per byte of 2(P-1)/P * N, from cache-resident buffers
    // (hot) to buffers of dense_cache_mib and more (cold), linear in between.
    double dense_alpha_us = 40.0;
    double dense_hot_ns = 0.28;
    double dense_cold_ns = 0.68;
    double dense_cache_mib = 8.0;
    // Aggregator streaming: fixed cost (µs: agreement, message round trips, completion barrier), ns per
    // byte the busiest rank sends or receives, and ns per byte of blocks that travel packed (gathered
    // at the sender, placed at the receiver) instead of as dense runs.
    double sparse_alpha_us = 80.0;
    double sparse_beta_ns = 0.27;
    double sparse_copy_ns = 0.38;
    // Allgather of non-zero blocks or pairs: latency per log2(P) step (µs), ns per byte gathered.
    double allgather_alpha_us = 30.0;
    double allgather_beta_ns = 0.4;
    // A sparse algorithm must be predicted this much faster than dense to be chosen: dense is never
    // worse than MPI_Allreduce, so uncertainty should fall on its side.
    double sparse_margin = 1.15;
};

}  // namespace mpix::sparse::detail
