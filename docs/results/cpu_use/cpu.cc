// Kept as the record of a probe (docs/performance.md, "Where a call's CPU goes"); not built by CMake.
// Build: mpicxx -O2 -std=c++17 -I include FILE -L build -Wl,-rpath,build -lmpix_sparse
// CPU use of a loop of MPIX_Sparse_allreduce (or MPI_Allreduce with MODE=mpi; MODE=inplace: MPI_IN_PLACE,
// the input copied into the output before each call, that copy timed too): the ranks' user+system
// time over the loop against wall x cores, and voluntary context switches per call.
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    double density = std::atof(argv[1]); int iters = std::atoi(argv[2]);
    const char *mode = getenv("MODE"); bool mpi = mode && std::string(mode) == "mpi"; bool floor = mode && std::string(mode) == "floor"; bool inplace = mode && std::string(mode) == "inplace";
    std::size_t n = (64u << 20) / 4;
    float *in = (float*)aligned_alloc(4096, n*4), *out = (float*)aligned_alloc(4096, n*4);
    std::memset(in, 0, n*4); std::memset(out, 0, n*4);
    std::mt19937_64 rng(rank * 7919 + 1); std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < n/256; ++b) if (on(rng)) for (int i = 0; i < 256; ++i) in[b*256+i] = 1.0f + (i+b)%5;
    auto call = [&] {
        if (mpi) MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (floor) std::memcpy(out, in, n * 4);
        else if (inplace) { std::memcpy(out, in, n * 4); MPIX_Sparse_allreduce(MPI_IN_PLACE, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
        else MPIX_Sparse_allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    };
    for (int i = 0; i < 5; ++i) call();
    MPI_Barrier(MPI_COMM_WORLD);
    rusage a, b; getrusage(RUSAGE_SELF, &a);
    double s = MPI_Wtime();
    for (int i = 0; i < iters; ++i) { call(); MPI_Barrier(MPI_COMM_WORLD); }
    double wall = MPI_Wtime() - s;
    getrusage(RUSAGE_SELF, &b);
    auto sec = [](timeval t) { return t.tv_sec + t.tv_usec * 1e-6; };
    double me[5] = {sec(b.ru_utime) - sec(a.ru_utime), sec(b.ru_stime) - sec(a.ru_stime), double(b.ru_nvcsw - a.ru_nvcsw), double(b.ru_nivcsw - a.ru_nivcsw), double(b.ru_minflt - a.ru_minflt)}, sum[5];
    MPI_Reduce(me, sum, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (rank == 0) std::printf("%s d=%.2f: %.2f ms/call, cpu %.0f%% of %ld cores (user %.2f ms, sys %.2f ms per call, all ranks), vol cs %.0f, invol cs %.0f, faults %.1f per call (all ranks)\n",
        mpi ? "mpi" : floor ? "floor" : "ours", density, wall / iters * 1e3, 100 * (sum[0] + sum[1]) / (wall * cores), cores, sum[0] / iters * 1e3, sum[1] / iters * 1e3, sum[2] / iters, sum[3] / iters, sum[4] / iters);
    MPI_Finalize();
}
