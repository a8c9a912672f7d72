// What buffers from MPIX_Sparse_alloc_mem save: MPIX_Sparse_allreduce on heap buffers and on
// MPIX_Sparse_alloc_mem buffers (the same inputs: random blocks at one density), and the floor (one
// copy of the buffer, the faster way: floor_copy.h), alternated call by call. Between two calls it
// can run what else a program does to caches and TLBs: nothing, a 256 MiB memset on every rank, or
// an MPI_Allreduce of the buffer (what osu_sparse_allreduce interleaves). Prints the median time of
// each (the slowest rank's per call) and the medians of the per-iteration ratios; checks that both
// results are equal.
//
// Usage: mpirun -np 4 alloc_mem_gain [density=0.5] [iterations=15] [between=none|sweep|mpi] [MiB=64]
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "aligned_buffer.h"
#include "floor_copy.h"
#include "median.h"

namespace {

// Random non-zero blocks of 256 floats at `density`, different on every rank.
void fill(float *x, std::size_t n, double density, int rank) {
    std::memset(x, 0, n * sizeof(float));
    std::mt19937_64 rng(static_cast<std::uint64_t>(rank) * 7919 + 1);
    std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < n / 256; ++b)
        if (on(rng))
            for (std::size_t i = 0; i < 256; ++i)
                x[b * 256 + i] = 1.0f + static_cast<float>((i + b) % 5);
}

float *shared_floats(std::size_t n) {
    void *p = nullptr;
    if (MPIX_Sparse_alloc_mem(static_cast<MPI_Aint>(n * sizeof(float)), MPI_INFO_NULL, &p) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return static_cast<float *>(p);
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const double density = argc > 1 ? std::atof(argv[1]) : 0.5;
    const int iterations = argc > 2 ? std::atoi(argv[2]) : 15;
    const std::string between = argc > 3 ? argv[3] : "none";
    const std::size_t n = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 64) << 18;  // MiB of floats
    if (!(density >= 0 && density <= 1) || iterations < 1 || n == 0 || n > (std::size_t{1} << 31) - 1 ||
        (between != "none" && between != "sweep" && between != "mpi")) {
        if (rank == 0) std::fprintf(stderr, "usage: alloc_mem_gain [density] [iterations] [none|sweep|mpi] [MiB]\n");
        MPI_Finalize();
        return 2;
    }
    // Page-aligned, as MPIX_Sparse_alloc_mem's memory is: a std::vector's 64 MiB sits 16 bytes past a
    // page, which alone made calls on it a quarter slower here (every block straddling a line more).
    bench::AlignedBuffer heap_in_bytes(n * sizeof(float)), heap_out_bytes(n * sizeof(float)),
        floor_out_bytes(n * sizeof(float)), mpi_out_bytes(n * sizeof(float));
    auto *heap_in = reinterpret_cast<float *>(heap_in_bytes.data()),
         *heap_out = reinterpret_cast<float *>(heap_out_bytes.data()),
         *floor_out = reinterpret_cast<float *>(floor_out_bytes.data()),
         *mpi_out = reinterpret_cast<float *>(mpi_out_bytes.data());
    std::vector<char> sweep(between == "sweep" ? std::size_t{256} << 20 : 0);
    float *shared_in = shared_floats(n), *shared_out = shared_floats(n);
    fill(heap_in, n, density, rank);
    std::memcpy(shared_in, heap_in, n * sizeof(float));
    const auto count = static_cast<MPI_Count>(n);
    const bench::FloorMethod floor_method =
        bench::choose_floor_method(floor_out, heap_in, n * sizeof(float), MPI_COMM_WORLD);
    enum { kHeap, kShared, kFloor, kMethods };
    std::vector<double> times[kMethods], shared_over_heap, shared_over_floor, heap_over_floor;
    for (int it = -3; it < iterations; ++it) {  // three untimed rounds first
        double t[kMethods];
        for (int m = 0; m < kMethods; ++m) {
            if (between == "mpi")
                MPI_Allreduce(heap_in, mpi_out, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else if (between == "sweep")
                std::memset(sweep.data(), it & 0xff, sweep.size());
            MPI_Barrier(MPI_COMM_WORLD);
            const double start = MPI_Wtime();
            if (m == kHeap)
                MPIX_Sparse_allreduce(heap_in, heap_out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else if (m == kShared)
                MPIX_Sparse_allreduce(shared_in, shared_out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else
                bench::floor_copy(floor_method, floor_out, heap_in, n * sizeof(float));
            const double mine = MPI_Wtime() - start;
            MPI_Allreduce(&mine, &t[m], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        if (it < 0) continue;
        for (int m = 0; m < kMethods; ++m)
            times[m].push_back(t[m]);
        shared_over_heap.push_back(t[kShared] / t[kHeap]);
        shared_over_floor.push_back(t[kShared] / t[kFloor]);
        heap_over_floor.push_back(t[kHeap] / t[kFloor]);
    }
    int same = std::memcmp(heap_out, shared_out, n * sizeof(float)) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Count in_place = 0;
    MPIX_Sparse_stats_in_place(MPI_COMM_WORLD, &in_place);
    if (rank == 0) {
        int ranks = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        std::printf(
            "# %d ranks, %zu MiB of floats, density %g, %d iterations, between calls: %s, floor: %s (medians)\n", ranks,
            n * sizeof(float) >> 20, density, iterations, between.c_str(), bench::floor_method_name(floor_method));
        std::printf("heap %.1f ms  alloc_mem %.1f ms  floor %.1f ms  heap/floor %.2f  alloc_mem/floor %.2f  "
                    "alloc_mem/heap %.2f  results %s  rank 0 bytes in place %lld\n",
                    bench::median(times[kHeap]) * 1e3, bench::median(times[kShared]) * 1e3,
                    bench::median(times[kFloor]) * 1e3, bench::median(heap_over_floor),
                    bench::median(shared_over_floor), bench::median(shared_over_heap), same ? "equal" : "DIFFER",
                    static_cast<long long>(in_place));
    }
    MPIX_Sparse_free_mem(shared_in);
    MPIX_Sparse_free_mem(shared_out);
    MPI_Finalize();
    return same ? 0 : 1;
}
