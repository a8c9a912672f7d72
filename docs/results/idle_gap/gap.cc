// The throwaway probe behind "The first call after an idle gap" in docs/performance.md (kept as the
// record of what was timed, not built). 4 ranks call MPIX_Sparse_allreduce on 64 MiB of random
// blocks; before each call every rank fills a gap of one kind, cycling through the kinds so that each
// kind sees the same machine state, then a barrier, then the timed call. Prints per kind the median
// of the slowest rank's time, of a memcpy of the buffer timed the same way, and of each profiled phase,
// and the most page faults and context switches a rank had during the call.
// Build: mpicxx -O2 -std=c++17 -I include gap.cc -L build -lmpix_sparse -Wl,-rpath,$PWD/build
// Run:   MPIX_SPARSE_PROFILE=on mpirun -np 4 ./gap DENSITY ITERATIONS GAP_SECONDS [KINDS=none,sleep,spin]
//        PROBE=1 times a read and a memcpy of the buffer instead of the call; PROBE=compute, arithmetic.
//        kinds: none | sleep | spin (busy loop) | mpi (one MPI_Allreduce of the buffer, whatever the gap)
//               | memcpy (the floor's memcpy, repeated for the gap); KIND+copy: then a 32 MiB memcpy
//               between scratch buffers the call does not touch
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
void fill_gap(std::string kind, double seconds, const float *in, float *out, float *tmp, std::size_t n) {
    const auto plus = kind.find("+copy");
    const bool copy_after = plus != std::string::npos;
    if (copy_after) kind.erase(plus);
    double until = MPI_Wtime() + seconds;
    if (kind == "sleep")
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    else if (kind == "spin") {
        volatile unsigned x = 0;
        while (MPI_Wtime() < until)
            for (int i = 0; i < 1000; ++i)
                x = x + 1;
    } else if (kind == "mpi")
        MPI_Allreduce(in, tmp, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);  // ~0.4 s at 64 MiB
    else if (kind == "memcpy")
        do
            std::memcpy(out, in, n * 4);
        while (MPI_Wtime() < until);
    // Memory traffic that the call does not read: wakes the memory system, leaves no input in cache.
    if (copy_after) std::memcpy(tmp, tmp + n / 2, n * 2);
}
}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double density = argc > 1 ? std::atof(argv[1]) : 0.5;
    int iters = argc > 2 ? std::atoi(argv[2]) : 20;
    double gap = argc > 3 ? std::atof(argv[3]) : 0.4;
    std::vector<std::string> kinds;
    std::stringstream ks(argc > 4 ? argv[4] : "none,sleep,spin");
    for (std::string k; std::getline(ks, k, ',');)
        kinds.push_back(k);
    const std::size_t n = (64u << 20) / 4;
    float *in = (float *)aligned_alloc(4096, n * 4), *out = (float *)aligned_alloc(4096, n * 4),
          *tmp = (float *)aligned_alloc(4096, n * 4);
    std::memset(in, 0, n * 4);
    std::memset(out, 0, n * 4);
    std::memset(tmp, 0, n * 4);
    std::mt19937_64 rng(rank * 7919 + 1);
    std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < n / 256; ++b)
        if (on(rng))
            for (int i = 0; i < 256; ++i)
                in[b * 256 + i] = 1.0f + (i + b) % 5;
    const bool probe = std::getenv("PROBE") != nullptr;
    const bool compute = probe && std::string(std::getenv("PROBE")) == "compute";
    volatile float sink = 0;
    // call, memcpy, scan, agreement, stream, reduce, result_write, barrier (ms); during the call:
    // minor page faults, voluntary and involuntary context switches (counts, scaled by 1e3 below)
    constexpr int kFields = 11;
    std::vector<std::vector<std::vector<double>>> samples(kinds.size(), std::vector<std::vector<double>>(kFields));
    for (int it = -1; it < iters; ++it) {
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            MPI_Barrier(MPI_COMM_WORLD);
            fill_gap(kinds[k], gap, in, out, tmp, n);
            MPIX_Sparse_profile before{}, after{};
            MPIX_Sparse_profile_get(MPI_COMM_WORLD, &before);
            MPI_Barrier(MPI_COMM_WORLD);
            rusage r0{}, r1{};
            getrusage(RUSAGE_SELF, &r0);
            double s = MPI_Wtime();
            if (compute) {  // PROBE=compute: the same gap and barrier, then arithmetic in registers only
                double x = 1.0;
                for (int i = 0; i < 4000000; ++i)
                    x = x * 1.0000001 + 1e-9;
                sink = static_cast<float>(x);
            } else if (probe) {  // PROBE=1: the same gap and barrier, then a read of the input and a memcpy
                float acc = 0;
                for (std::size_t i = 0; i < n; i += 16)
                    acc += in[i];
                sink = acc;
                std::memcpy(out, in, n * 4);
            } else {
                MPIX_Sparse_allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            }
            double call = MPI_Wtime() - s;
            getrusage(RUSAGE_SELF, &r1);
            MPIX_Sparse_profile_get(MPI_COMM_WORLD, &after);
            MPI_Barrier(MPI_COMM_WORLD);
            s = MPI_Wtime();
            std::memcpy(tmp, in, n * 4);
            double copy = MPI_Wtime() - s;
            double mine[kFields] = {call,
                                    copy,
                                    after.scan - before.scan,
                                    after.agreement - before.agreement,
                                    after.stream - before.stream,
                                    after.reduce - before.reduce,
                                    after.result_write - before.result_write,
                                    after.barrier - before.barrier,
                                    1e-3 * double(r1.ru_minflt - r0.ru_minflt),
                                    1e-3 * double(r1.ru_nvcsw - r0.ru_nvcsw),
                                    1e-3 * double(r1.ru_nivcsw - r0.ru_nivcsw)};
            double slowest[kFields];
            MPI_Allreduce(mine, slowest, kFields, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (it >= 0)
                for (int f = 0; f < kFields; ++f)
                    samples[k][f].push_back(slowest[f] * 1e3);
        }
    }
    if (rank == 0) {
        std::printf("density %g, gap %g s, %d iterations; medians of the slowest rank, ms\n", density, gap, iters);
        std::printf("%-8s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "gap", "call", "memcpy", "scan", "agree",
                    "stream", "reduce", "write", "barrier", "faults", "vcsw", "ivcsw");
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            std::printf("%-8s", kinds[k].c_str());
            for (int f = 0; f < kFields; ++f)
                std::printf(" %7.2f", median(samples[k][f]));
            std::printf("\n");
        }
    }
    MPI_Finalize();
}
