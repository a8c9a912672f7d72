// Kept as the record of a probe (docs/performance.md, "The scan reads whole blocks into two vector
// accumulators"); not built by CMake. Build: mpicxx -O2 -std=c++17 scanv.cc -o scanv; run (one process a
// core): mpirun --oversubscribe --bind-to none -np 2 ./scanv D 20. Scans 64 MiB of 1 KiB blocks, density D
// random, with each way of testing a block; each process times its own pass, the slowest rank counts.
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
template <int PF> static inline bool line_zero(const std::byte *p) {
    if (PF) __builtin_prefetch(p + PF);
    std::uint64_t w[8]; std::memcpy(w, p, 64);
    return (((w[0] | w[1]) | (w[2] | w[3])) | ((w[4] | w[5]) | (w[6] | w[7]))) == 0;
}
template <int PF> __attribute__((target("avx2"))) static bool blk_early(const std::byte *p) {
    for (std::size_t i = 0; i < kBlock; i += 64) if (!line_zero<PF>(p + i)) return false;
    return true;
}
template <int PF> __attribute__((target("avx2"))) static bool blk_or(const std::byte *p) {
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < kBlock; i += 64) { if (PF) __builtin_prefetch(p + i + PF); std::uint64_t w[8]; std::memcpy(w, p + i, 64); acc |= ((w[0] | w[1]) | (w[2] | w[3])) | ((w[4] | w[5]) | (w[6] | w[7])); }
    return acc == 0;
}
__attribute__((target("avx512f"))) static bool blk_512(const std::byte *p) {
    __m512i a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(p + 64);
    for (std::size_t i = 128; i < kBlock; i += 128) { a = _mm512_or_si512(a, _mm512_loadu_si512(p + i)); b = _mm512_or_si512(b, _mm512_loadu_si512(p + i + 64)); }
    return _mm512_test_epi64_mask(_mm512_or_si512(a, b), _mm512_or_si512(a, b)) == 0;
}
__attribute__((target("avx512f"))) static void scopy(std::byte *out, const std::byte *in) { for (std::size_t i = 0; i < kBytes; i += 64) _mm512_stream_si512(reinterpret_cast<__m512i *>(out + i), _mm512_loadu_si512(in + i)); _mm_sfence(); }
__attribute__((target("avx2"))) static bool blk_256(const std::byte *p) {
    __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
    for (std::size_t i = 64; i < kBlock; i += 64) { a = _mm256_or_si256(a, _mm256_loadu_si256((const __m256i *)(p + i))); b = _mm256_or_si256(b, _mm256_loadu_si256((const __m256i *)(p + i + 32))); }
    a = _mm256_or_si256(a, b);
    return _mm256_testz_si256(a, a);
}
__attribute__((target("avx512f"))) static bool blk_512pf(const std::byte *p) {
    __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
    for (std::size_t i = 0; i < kBlock; i += 128) { __builtin_prefetch(p + i + 4096); __builtin_prefetch(p + i + 4096 + 64); a = _mm512_or_si512(a, _mm512_loadu_si512(p + i)); b = _mm512_or_si512(b, _mm512_loadu_si512(p + i + 64)); }
    return _mm512_test_epi64_mask(_mm512_or_si512(a, b), _mm512_or_si512(a, b)) == 0;
}
__attribute__((target("avx512f"))) static bool blk_512early(const std::byte *p) {
    for (std::size_t i = 0; i < kBlock; i += 64) { __m512i a = _mm512_loadu_si512(p + i); if (_mm512_test_epi64_mask(a, a)) return false; }
    return true;
}
template <int PF, int EVERY> __attribute__((target("avx2"))) static bool blk_256pf(const std::byte *p) {
    typedef std::uint64_t L __attribute__((vector_size(32)));
    L a{}, b{};
    for (std::size_t i = 0; i < kBlock; i += 64) { if (PF && i % EVERY == 0) __builtin_prefetch(p + i + PF); L x, y; std::memcpy(&x, p + i, 32); std::memcpy(&y, p + i + 32, 32); a |= x; b |= y; }
    a |= b;
    return (a[0] | a[1] | a[2] | a[3]) == 0;
}
using F = bool (*)(const std::byte *);
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const double d = std::atof(argv[1]); const int rounds = std::atoi(argv[2]);
    auto *in = static_cast<std::byte *>(aligned_alloc(4096, kBytes)), *out = static_cast<std::byte *>(aligned_alloc(4096, kBytes));
    std::memset(in, 0, kBytes); std::memset(out, 1, kBytes);
    std::mt19937 rng(rank + 1); std::bernoulli_distribution on(d);
    for (std::size_t b = 0; b < kBlocks; ++b) if (on(rng)) std::memset(in + b * kBlock, 7, kBlock);
    std::vector<std::uint8_t> bits(kBlocks);
    const int M = 14;
    F f[M] = {blk_early<4096>, blk_early<0>, blk_early<1024>, blk_or<4096>, blk_or<0>, blk_512, nullptr, blk_256, blk_512pf, blk_512early, blk_256pf<0, 64>, blk_256pf<4096, 64>, blk_256pf<4096, 256>, blk_256pf<4096, 1024>};
    const char *name[M] = {"early pf4k (lib)", "early nopf", "early pf1k", "or pf4k", "or nopf", "avx512 nopf", "stream copy", "avx2 2acc nopf", "avx512 pf4k", "avx512 early", "vext nopf", "vext pf/line", "vext pf/256", "vext pf/blk"};
    std::vector<double> t[M];
    for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < M; ++m) {
            MPI_Barrier(MPI_COMM_WORLD);
            double s = MPI_Wtime();
            if (f[m]) { for (std::size_t b = 0; b < kBlocks; ++b) bits[b] = !f[m](in + b * kBlock); }
            else scopy(out, in);
            double e = MPI_Wtime() - s, mx;
            MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r > 0) t[m].push_back(mx * 1e3);
        }
    if (rank == 0)
        for (int m = 0; m < M; ++m) { std::sort(t[m].begin(), t[m].end()); std::printf("d=%.2f %-18s median %.2f ms\n", d, name[m], t[m][t[m].size() / 2]); }
    MPI_Finalize();
}
