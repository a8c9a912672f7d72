// Kept as the record of a probe (docs/performance.md, "Contiguous runs reduced together"); not built by
// CMake. Build: mpicxx -O3 -std=c++17 acc.cc -o acc3; run: mpirun --oversubscribe --bind-to none -np 2 ./acc3 21.
// reduction of 4 sources of 16 MiB (contiguous) into a 256 KiB window, block by block (1 KiB), prefetch variants; one process a core
#include <mpi.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
static const std::size_t kSrc = 16u << 20, kWin = 256u << 10, kBlock = 1024;
template <int MODE> __attribute__((target("avx2,fma"))) static void add_block(float *out, const float *in, bool first) {
    const std::byte *b = reinterpret_cast<const std::byte *>(in);
    if (MODE == 1) for (std::size_t l = 0; l < kBlock; l += 64) __builtin_prefetch(b + l + 4096);
    if (MODE == 2) __builtin_prefetch(b + 4096);
    if (first) std::memcpy(out, in, kBlock);
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
template <int MODE> __attribute__((target("avx2,fma"))) static void add_block2(float *out, const float *in, bool first) {
    if (first) { for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] = in[e]; }
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
__attribute__((target("avx512f"))) static void add_block512(float *__restrict out, const float *__restrict in, bool first) {
    if (first) { for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] = in[e]; }
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
__attribute__((target("avx2"))) static void add_block256r(float *__restrict out, const float *__restrict in, bool first) {
    if (first) { for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] = in[e]; }
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
__attribute__((target("avx512f"))) static void add_block512nr(float *out, const float *in, bool first) {
    if (first) { for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] = in[e]; }
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
static void add_lib(float *out, const float *in, bool first) {
    const std::byte *b = reinterpret_cast<const std::byte *>(in);
    for (std::size_t l = 0; l < kBlock; l += 64) __builtin_prefetch(b + l + 4096);
    if (first) { float *__restrict o = out; const float *__restrict i2 = in; for (std::size_t e = 0; e < kBlock / 4; ++e) o[e] = i2[e]; }
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
__attribute__((target("avx2"))) static void add_avx2_nr(float *out, const float *in, bool first) {
    const std::byte *b = reinterpret_cast<const std::byte *>(in);
    for (std::size_t l = 0; l < kBlock; l += 64) __builtin_prefetch(b + l + 4096);
    if (first) { float *__restrict o = out; const float *__restrict i2 = in; for (std::size_t e = 0; e < kBlock / 4; ++e) o[e] = i2[e]; }
    else for (std::size_t e = 0; e < kBlock / 4; ++e) out[e] += in[e];
}
using F = void (*)(float *, const float *, bool);
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int rounds = std::atoi(argv[1]);
    std::vector<float *> src(4);
    for (auto &s : src) { s = static_cast<float *>(aligned_alloc(4096, kSrc)); std::fill(s, s + kSrc / 4, 1.0f); }
    auto *win = static_cast<float *>(aligned_alloc(4096, kWin)); std::memset(win, 0, kWin);
    F f[5] = {add_lib, add_avx2_nr, add_block512, add_block256r, add_block<1>}; const char *name[5] = {"lib-like sse2", "avx2 norestrict", "avx512 restrict", "avx2 restrict", "fused 4-way"};
    std::vector<double> t[5]; int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank); double sink = 0;
    for (int r = 0; r < rounds; ++r) for (int k = 0; k < 5; ++k) { const int m = (k + r) % 5;
        MPI_Barrier(MPI_COMM_WORLD); double s = MPI_Wtime();
        if (m == 4) { for (std::size_t w = 0; w < kSrc; w += kWin) { const float *a0 = src[0] + w / 4, *a1 = src[1] + w / 4, *a2 = src[2] + w / 4, *a3 = src[3] + w / 4; float *__restrict o = win;
                for (std::size_t e = 0; e < kWin / 4; ++e) o[e] = ((a0[e] + a1[e]) + a2[e]) + a3[e]; } } else
        if (getenv("READONLY")) { for (int c = 0; c < 4; ++c) { float a = 0; for (std::size_t e = 0; e < kSrc / 4; e += 16) a += src[c][e]; sink += a; } } else
        for (std::size_t w = 0; w < kSrc; w += kWin)
            for (int c = 0; c < 4; ++c)
                for (std::size_t b = 0; b < kWin; b += kBlock)
                    f[m](win + b / 4, src[c] + (w + b) / 4, c == 0);
        sink += win[7];
        double e = MPI_Wtime() - s, mx; MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r) t[m].push_back(mx * 1e3);
    }
    if (!rank) for (int m = 0; m < 5; ++m) { std::sort(t[m].begin(), t[m].end()); std::printf("%-12s %.2f ms (sink %g)\n", name[m], t[m][t[m].size()/2], sink); }
    MPI_Finalize();
}
