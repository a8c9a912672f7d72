// What every part of a benchmark run needs: the options, the communicators and this rank's place.
#ifndef MPIX_SPARSE_BENCH_BENCH_CONTEXT_H
#define MPIX_SPARSE_BENCH_BENCH_CONTEXT_H

#include "bench_options.h"

#include <mpi.h>

#include <array>
#include <cstdio>

namespace bench {

// The algorithms --forced times, each on its own communicator (mpix_sparse_algorithm).
inline constexpr std::array<const char *, 3> kForcedAlgorithms = {"dense", "aggregator", "allgather"};

struct BenchContext {
    const BenchOptions &opts;
    MPI_Comm lib_comm;   // from MPIX_Sparse_comm_create; only library calls use it, so its
                         // statistics count exactly the calls we time
    MPI_Comm base_comm;  // duplicate of lib_comm for the baselines, barriers and result reductions
    int rank;
    int nranks;
    // --forced: a communicator per kForcedAlgorithms entry (else MPI_COMM_NULL).
    std::array<MPI_Comm, kForcedAlgorithms.size()> forced{MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
};

// Aborts the job with MPI's message when a call failed: a benchmark of a failing call means nothing.
inline void check_mpi(int rc, const char *what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    std::fprintf(stderr, "# ERROR: %s failed: %.*s (code %d)\n", what, len, text, rc);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace bench

#endif
