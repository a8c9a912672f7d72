// The throwaway element-variant loop behind "The scratch tile kept zero" in docs/performance.md (kept as
// the record, not built): 4 ranks call MPIX_Sparse_allreduce_elements with random unique indices at
// DENSITY of N floats, a barrier before each call; rank 0 prints the median of the slowest rank's time.
// Build: mpicxx -O2 -std=c++17 -I include loop_el.cc -L build -lmpix_sparse
// Run:   mpirun -np 4 ./a.out DENSITY ITERATIONS [N=1048576]
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>
#include <set>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double density = argc > 1 ? std::atof(argv[1]) : 0.01;
    int iters = argc > 2 ? std::atoi(argv[2]) : 1000;
    std::size_t n = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : (1u << 20);
    std::mt19937_64 rng(rank * 7919 + 1);
    std::set<int64_t> s; std::uniform_int_distribution<int64_t> u(0, n - 1);
    while (s.size() < density * n) s.insert(u(rng));
    std::vector<int64_t> idx(s.begin(), s.end()); std::vector<float> val(idx.size(), 1.5f);
    std::vector<float> out(n);
    std::vector<double> t;
    for (int it = -10; it < iters; ++it) {
        MPI_Barrier(MPI_COMM_WORLD);
        double st = MPI_Wtime();
        MPIX_Sparse_allreduce_elements(idx.size(), idx.data(), val.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double e = MPI_Wtime() - st, mx;
        MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= 0) t.push_back(mx);
    }
    std::sort(t.begin(), t.end());
    if (rank == 0) std::printf("elements %zu density %g: median %.3f ms\n", n, density, t[t.size()/2]*1e3);
    MPI_Finalize();
}
