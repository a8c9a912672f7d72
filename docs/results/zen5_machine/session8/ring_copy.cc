// Kept as the record of a probe (docs/performance.md, "Where the ratios stand after the eighth session");
// not built by CMake. Build: mpicxx -O2 -std=c++17 ring_copy.cc -o ring_copy; run one process a core:
// mpirun --oversubscribe --bind-to none -np 2 ./ring_copy ARGS (see main).
// copy 64 MiB in 256 KiB chunks into a ring of 4 slots (ordinary stores), variants; one process a core
#include <mpi.h>
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
static const std::size_t kBytes = 64u << 20, kChunk = 256u << 10;
static void libc(std::byte *d, const std::byte *s, std::size_t n) { std::memcpy(d, s, n); }
template <int PF> __attribute__((target("avx512f"))) static void loop512(std::byte *d, const std::byte *s, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 128) { if (PF) __builtin_prefetch(s + i + PF); if (PF) __builtin_prefetch(s + i + PF + 64);
        __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64);
        _mm512_storeu_si512(d + i, a); _mm512_storeu_si512(d + i + 64, b); }
}
static void movsb(std::byte *d, const std::byte *s, std::size_t n) { asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"); }
using F = void (*)(std::byte *, const std::byte *, std::size_t);
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int rounds = std::atoi(argv[1]);
    auto *in = static_cast<std::byte *>(aligned_alloc(4096, kBytes)), *ring = static_cast<std::byte *>(aligned_alloc(4096, 4 * kChunk));
    std::memset(in, 3, kBytes); std::memset(ring, 1, 4 * kChunk);
    F f[4] = {libc, loop512<0>, loop512<4096>, movsb}; const char *name[4] = {"memcpy", "avx512 loop", "avx512 pf4k", "rep movsb"};
    std::vector<double> t[4]; int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank); double sink = 0;
    for (int r = 0; r < rounds; ++r) for (int k = 0; k < 4; ++k) { const int m = (k + r) % 4;
        MPI_Barrier(MPI_COMM_WORLD); double s = MPI_Wtime();
        for (std::size_t o = 0, c = 0; o < kBytes; o += kChunk, ++c) {
            std::byte *slot = ring + (c % 4) * kChunk;
            f[m](slot, in + o, kChunk);
            // the reader: sum a word per line of the slot (it is read from the cache)
            std::uint64_t acc = 0; for (std::size_t i = 0; i < kChunk; i += 64) acc += *reinterpret_cast<std::uint64_t *>(slot + i); sink += acc;
        }
        double e = MPI_Wtime() - s, mx; MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r) t[m].push_back(mx * 1e3);
    }
    if (!rank) for (int m = 0; m < 4; ++m) { std::sort(t[m].begin(), t[m].end()); std::printf("%-12s %.2f ms\n", name[m], t[m][t[m].size()/2]); }
    MPI_Finalize();
}
