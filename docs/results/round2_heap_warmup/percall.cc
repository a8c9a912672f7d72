// Kept as the record of a probe (docs/performance.md, "MPI_Allreduce's fresh pages, and the aggregator's first calls"); not built by CMake.
// Build: mpicxx -O2 -std=c++17 -I include FILE -L build -Wl,-rpath,build -lmpix_sparse
// Per-call time (slowest rank) and page faults (sum over ranks) of MPIX_Sparse_allreduce for the first
// calls of one shape: KiB DENSITY CALLS [BUCKET]. Prints the mean of each bucket of calls.
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::size_t kib = std::atoi(argv[1]); double density = std::atof(argv[2]);
    int calls = std::atoi(argv[3]); int bucket = argc > 4 ? std::atoi(argv[4]) : 10;
    std::size_t n = kib * 1024 / 4;
    float *in = (float*)aligned_alloc(4096, n*4), *out = (float*)aligned_alloc(4096, n*4);
    std::memset(in, 0, n*4); std::memset(out, 0, n*4);
    std::mt19937_64 rng(rank * 7919 + 1); std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < n/256; ++b) if (on(rng)) for (int i = 0; i < 256; ++i) in[b*256+i] = 1.0f + (i+b)%5;
    double tsum = 0, fsum = 0;
    for (int it = 0; it < calls; ++it) {
        rusage a, b; getrusage(RUSAGE_SELF, &a);
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        MPIX_Sparse_allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double e = MPI_Wtime() - s;
        getrusage(RUSAGE_SELF, &b);
        double me[2] = {e, double(b.ru_minflt - a.ru_minflt)}, r[2];
        MPI_Reduce(&me[0], &r[0], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&me[1], &r[1], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        tsum += r[0]; fsum += r[1];
        if ((it + 1) % bucket == 0) {
            if (rank == 0) std::printf("calls %4d-%4d: %7.1f us, %5.1f faults/call (all ranks)\n", it + 2 - bucket, it + 1, tsum / bucket * 1e6, fsum / bucket);
            tsum = fsum = 0;
        }
    }
    MPI_Finalize();
}
