// Machine constants of the cost model (see core/cost_model.h and docs/architecture.md). The defaults
// were measured on the project's reference machine (2-core EPYC VM, Open MPI 4.1 shared memory, UCX
// 1.13 shared memory); MPIX_SPARSE_COST_* environment variables override them.
#pragma once

namespace mpix::sparse {

struct CostParams {
    // Dense MPI_Allreduce: latency (µs) and seconds per byte of 2(P-1)/P * N (ns per byte).
    double dense_alpha_us = 30.0;
    double dense_beta_ns = 2.0;
    // Aggregator streaming: fixed cost per call (µs: agreement + first message round trip), ns per
    // byte sent or received by the busiest rank, and ns per byte of input scanned / output written.
    double sparse_alpha_us = 60.0;
    double sparse_beta_ns = 1.0;
    double memory_ns = 0.08;
    // Allgather of non-zero blocks or pairs: latency (µs) and ns per byte gathered by each rank.
    double allgather_alpha_us = 30.0;
    double allgather_beta_ns = 1.0;
};

}  // namespace mpix::sparse
