// The throwaway loop behind "Zero-byte libc calls" in docs/performance.md (kept as the record of what
// was timed and profiled, not built): 4 ranks call MPIX_Sparse_allreduce on page-aligned heap buffers
// of random blocks, a barrier before each call, and rank 0 prints the median of the slowest rank's
// time. Build: mpicxx -O2 -g -std=c++17 -I include library_loop.cc -L build -lmpix_sparse
// Run:   mpirun -np 4 ./a.out DENSITY ITERATIONS [MiB=64] [h: float16]; FLOOR=1 adds a memcpy per call.
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double density = argc > 1 ? std::atof(argv[1]) : 0.5;
    int iters = argc > 2 ? std::atoi(argv[2]) : 100;
    std::size_t mib = argc > 3 ? std::atoi(argv[3]) : 64; bool half = argc > 4 && argv[4][0] == 'h'; std::size_t n = (mib << 20) / 4;
    float *in = (float*)aligned_alloc(4096, n*4), *out = (float*)aligned_alloc(4096, n*4);
    std::memset(in, 0, n*4); std::memset(out, 0, n*4);
    std::mt19937_64 rng(rank * 7919 + 1); std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < n/256; ++b) if (on(rng)) for (int i = 0; i < 256; ++i) in[b*256+i] = 1.0f + (i+b)%5;
    std::vector<double> t, f;
    for (int it = -3; it < iters; ++it) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        if (half) MPIX_Sparse_allreduce(in, out, (int)(2*n), MPIX_FLOAT16, MPI_SUM, MPI_COMM_WORLD); else MPIX_Sparse_allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double e = MPI_Wtime() - s;
        MPI_Barrier(MPI_COMM_WORLD);
        double s2 = MPI_Wtime();
        if (getenv("FLOOR")) std::memcpy(out, in, n*4);
        double e2 = MPI_Wtime() - s2;
        double me[2] = {e, e2}, mx[2];
        MPI_Allreduce(me, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= 0) { t.push_back(mx[0]); f.push_back(mx[1]); }
    }
    std::sort(t.begin(), t.end()); std::sort(f.begin(), f.end());
    if (rank == 0) std::printf("density %g: median %.2f ms, floor %.2f ms, ratio %.2f\n", density, t[t.size()/2]*1e3, f[f.size()/2]*1e3, t[t.size()/2]/f[f.size()/2]);
    MPI_Finalize();
}
