// Kept as the record of a probe (docs/performance.md, "MPI_Allreduce's fresh pages, and the aggregator's first calls"); not built by CMake.
// MPI_Allreduce of MiB (argument, 64) floats on every rank, six times: time and rank 0's minor page faults. Build: mpicxx -O2 mpiar.cc
#include <mpi.h>
#include <sys/resource.h>
#include <cstdio>
#include <vector>
#include <cstdlib>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t mib = argc > 1 ? std::atoi(argv[1]) : 64; std::size_t n = (mib << 20) / 4;
  std::vector<float> in(n, 1.0f), out(n);
  for (int it = 0; it < 6; ++it) {
    rusage a, b; getrusage(RUSAGE_SELF, &a);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    MPI_Allreduce(in.data(), out.data(), (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    getrusage(RUSAGE_SELF, &b);
    if (rank == 0) std::printf("MPI_Allreduce %zu MiB: %.1f ms, %ld minor faults on rank 0\n", mib, t * 1e3, b.ru_minflt - a.ru_minflt);
  }
  MPI_Finalize();
}
