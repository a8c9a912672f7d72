// Kept as the record of a probe (docs/performance.md, "Where a call's CPU goes": the slow last bucket); not built by CMake.
// Build as cpu.cc. Run: mpirun -np 4 last KiB DENSITY CALLS TAIL [MODE: 0 nothing, 1 MPI_Reduce, 2 +getrusage, 3 +printf per call]
// Per-rank times of the last calls of a run: is the last call slow, and on which rank?
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <cstdio>
#include <sys/resource.h>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::size_t kib = std::atoi(argv[1]); double density = std::atof(argv[2]);
    int calls = std::atoi(argv[3]); int tail = std::atoi(argv[4]); int mode = argc > 5 ? std::atoi(argv[5]) : 0;
    std::size_t n = kib * 1024 / 4;
    std::vector<float> in(n), out(n);
    std::mt19937_64 rng(rank * 7919 + 1); std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < n/256; ++b) if (on(rng)) for (int i = 0; i < 256; ++i) in[b*256+i] = 1.0f + (i+b)%5;
    std::vector<double> t(calls), s0(calls);
    for (int it = 0; it < calls; ++it) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        MPIX_Sparse_allreduce(in.data(), out.data(), (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        t[it] = MPI_Wtime() - s; s0[it] = s;
        if (mode >= 2) { rusage a; getrusage(RUSAGE_SELF, &a); double x[2] = {t[it], double(a.ru_minflt)}, y[2]; MPI_Reduce(&x[0], &y[0], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD); MPI_Reduce(&x[1], &y[1], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); if (mode == 3 && rank == 0) std::printf("call %d %.1f\n", it + 1, y[0] * 1e6); }
        if (mode == 1) { double x = t[it], y; MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD); }
    }
    std::vector<double> all(size * calls);
    MPI_Gather(t.data(), calls, MPI_DOUBLE, all.data(), calls, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int it = calls - tail; it < calls; ++it) {
            std::printf("call %d:", it + 1);
            for (int r = 0; r < size; ++r) std::printf(" %8.1f", all[r * calls + it] * 1e6);
            std::printf("\n");
        }
    MPI_Finalize();
}
