// Kept as the record of a probe (docs/performance.md, "MPI_Allreduce's fresh pages, and the aggregator's first calls"); not built by CMake.
// Build: mpicxx -O2 -std=c++17 -I include FILE -L build -Wl,-rpath,build -lmpix_sparse
// Time of MPIX_Sparse_comm_create (slowest rank): the first (new endpoints) and the median of 9 more.
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <algorithm>
#include <cstdio>
#include <vector>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<double> t;
    for (int i = 0; i < 10; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        MPI_Comm c; MPIX_Sparse_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &c);
        double e = MPI_Wtime() - s, m;
        MPI_Allreduce(&e, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t.push_back(m);
        MPIX_Sparse_comm_free(&c);
    }
    std::sort(t.begin() + 1, t.end());
    if (rank == 0) std::printf("first %.1f ms, later median %.1f ms\n", t[0] * 1e3, t[5] * 1e3);
    MPI_Finalize();
}
