// The library's own cost per call: MPIX_Sparse_allreduce against MPI_Allreduce on a one-rank
// MPI_COMM_WORLD, where both are a copy of the input (the library takes its dense path by the
// arguments, the path of every call below mpix_sparse_dense_below on any communicator). Blocks of
// calls of each alternate round by round; prints the median per-call time of each and of their
// difference, which is what the library adds to MPI's own work. The process's placement moves
// these few-ns figures by tens of ns: compare builds over several processes.
// Usage: mpirun -np 1 call_overhead [floats=0,256] [calls per round=200000] [rounds=9]
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "median.h"

namespace {

template <class Call>
double ns_per_call(int calls, Call &&call) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i)
        call();
    return (MPI_Wtime() - t0) / calls * 1e9;
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) {
        std::fprintf(stderr, "call_overhead: run it on one rank (with more, MPI's time would include communication)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::vector<int> counts;
    std::stringstream list(argc > 1 ? argv[1] : "0,256");
    for (std::string item; std::getline(list, item, ',');)
        counts.push_back(std::atoi(item.c_str()));
    const int calls = argc > 2 ? std::atoi(argv[2]) : 200000;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 9;
    std::printf("# floats  MPI_Allreduce(ns)  MPIX_Sparse_allreduce(ns)  added(ns)  (medians of %d rounds)\n", rounds);
    for (const int n : counts) {
        std::vector<float> in(static_cast<std::size_t>(n) + 1, 1.0f), out(in.size());
        std::vector<double> mpi, ours, added;
        for (int r = 0; r < rounds; ++r) {
            const double m = ns_per_call(
                calls, [&] { MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
            const double o = ns_per_call(
                calls, [&] { MPIX_Sparse_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
            mpi.push_back(m);
            ours.push_back(o);
            added.push_back(o - m);
        }
        std::printf("%8d  %17.1f  %25.1f  %9.1f\n", n, bench::median(mpi), bench::median(ours), bench::median(added));
    }
    MPI_Finalize();
    return 0;
}
