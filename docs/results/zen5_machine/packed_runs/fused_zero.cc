// Kept as the record of a probe (docs/performance.md, "Back on a Zen 5 guest"); not built by CMake.
// Build: mpicxx -O2 -std=c++17 fused_zero.cc -o fz; run: mpirun --oversubscribe --bind-to none -np 4 ./fz D 20
// Probe: is scanning the input and zero-filling the output's absent blocks cheaper fused (per 64 KiB
// chunk: read it, then stream zeros over the output's blocks that were zero) than as two passes
// (scan all, then zero all absent blocks), against memcpy? 4 processes on 2 cores at once (mpirun).
// 64 MiB floats, blocks of 1 KiB, density D (random blocks). Alternates the methods, medians.
#include <mpi.h>
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
static const std::size_t kBytes = 64u << 20, kBlock = 1024, kBlocks = kBytes / kBlock;
__attribute__((target("avx512f"))) static void nt_zero(std::byte *d, std::size_t n) {
    const __m512i z = _mm512_setzero_si512();
    for (std::size_t i = 0; i < n; i += 64) _mm512_stream_si512(reinterpret_cast<__m512i *>(d + i), z);
}
static bool block_zero(const std::byte *p) {
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < kBlock; i += 64) {
        __builtin_prefetch(p + i + 4096);
        std::uint64_t w[8];
        std::memcpy(w, p + i, 64);
        acc |= ((w[0] | w[1]) | (w[2] | w[3])) | ((w[4] | w[5]) | (w[6] | w[7]));
    }
    return acc == 0;
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const double d = std::atof(argv[1]); const int rounds = std::atoi(argv[2]);
    auto *in = static_cast<std::byte *>(aligned_alloc(4096, kBytes)), *out = static_cast<std::byte *>(aligned_alloc(4096, kBytes));
    std::memset(in, 0, kBytes); std::memset(out, 1, kBytes);
    std::mt19937 rng(rank + 1); std::bernoulli_distribution on(d);
    for (std::size_t b = 0; b < kBlocks; ++b) if (on(rng)) std::memset(in + b * kBlock, 7, kBlock);
    std::vector<std::uint8_t> bits(kBlocks);
    std::vector<double> t[3];
    const char *name[3] = {"two passes", "fused", "memcpy"};
    for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < 3; ++m) {
            MPI_Barrier(MPI_COMM_WORLD);
            double s = MPI_Wtime();
            if (m == 0) {
                for (std::size_t b = 0; b < kBlocks; ++b) bits[b] = !block_zero(in + b * kBlock);
                for (std::size_t b = 0; b < kBlocks; ++b) if (!bits[b]) nt_zero(out + b * kBlock, kBlock);
            } else if (m == 1) {
                for (std::size_t c = 0; c < kBlocks; c += 64) {
                    for (std::size_t b = c; b < c + 64; ++b) bits[b] = !block_zero(in + b * kBlock);
                    for (std::size_t b = c; b < c + 64; ++b) if (!bits[b]) nt_zero(out + b * kBlock, kBlock);
                }
            } else {
                std::memcpy(out, in, kBytes);
            }
            _mm_sfence();
            double e = MPI_Wtime() - s, mx;
            MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);  // all ranks done
            if (r > 0) t[m].push_back(mx * 1e3);
        }
    if (rank == 0) {
        for (int m = 0; m < 3; ++m) { std::sort(t[m].begin(), t[m].end()); std::printf("d=%.2f %-10s median %.2f ms (all 4 ranks done)\n", d, name[m], t[m][t[m].size() / 2]); }
    }
    MPI_Finalize();
}
