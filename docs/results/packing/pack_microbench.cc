// The throwaway microbenchmark behind "Packing contributions" in docs/performance.md (kept as the
// record of what was timed, not built by CMake): P processes at once, each with 64 MiB of floats in
// random 1 KiB blocks at a density, time (slowest process, median over iterations) for
//   scan        the zero-block scan alone (prefetch 4 KiB ahead, as the library's);
//   scan+pack   the scan, then the non-zero blocks copied into a packed buffer with memcpy (as before);
//   fused       each non-zero block copied as the scan finds it (ordinary stores) / fused-nt (streaming);
//   memcpy      the floor: one memcpy of the buffer;
//   pack-nt / pack-pf / pack-nt-pf  the separate pack with streaming stores, with the next blocks'
//               lines asked for ahead, with both (what gather_blocks now does).
// Build: g++ -O2 -march=native pack_microbench.cc; run: ./a.out PROCESSES ITERATIONS DENSITY
#include <immintrin.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
constexpr size_t B = 1024, N = 64u << 20, NB = N / B;
static bool zero_block(const float *p) {
    __m512 acc = _mm512_setzero_ps();
    for (int i = 0; i < 256; i += 16) acc = _mm512_or_ps(acc, _mm512_loadu_ps(p + i));
    return _mm512_test_epi32_mask(_mm512_castps_si512(acc), _mm512_castps_si512(acc)) == 0;
}
static void nt_copy(char *d, const char *s) {
    for (int i = 0; i < 1024; i += 64) _mm512_stream_si512((__m512i *)(d + i), _mm512_loadu_si512(s + i));
}
int main(int argc, char **argv) {
    int P = atoi(argv[1]), iters = atoi(argv[2]);
    double dens = argc > 3 ? atof(argv[3]) : 0.5;
    // barrier via shared counter
    auto *sh = (volatile long *)mmap(nullptr, 1<<20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (int p = 0; p < P; ++p) if (fork() == 0) {
        float *in = (float *)aligned_alloc(4096, N); char *dst = (char *)aligned_alloc(4096, N);
        std::memset(dst, 1, N);
        std::mt19937 rng(p + 1); std::bernoulli_distribution on(dens);
        for (size_t b = 0; b < NB; ++b) { bool nz = on(rng); for (int i = 0; i < 256; ++i) in[b*256+i] = nz ? 1.0f + i : 0.0f; }
        std::vector<uint32_t> idx(NB); std::vector<double> t[8];
        long gen = 0;
        auto barrier = [&] { ++gen; __sync_fetch_and_add(&sh[0], 1); while (sh[0] < gen * P) usleep(0); };
        for (int it = 0; it < iters; ++it) for (int m = 0; m < 8; ++m) {
            barrier(); double s = now(); size_t n = 0;
            if (m == 0) { for (size_t b = 0; b < NB; ++b) { __builtin_prefetch((char*)(in + b*256) + 4096); if (!zero_block(in + b * 256)) idx[n++] = b; } }
            if (m == 1) { for (size_t b = 0; b < NB; ++b) { __builtin_prefetch((char*)(in + b*256) + 4096); if (!zero_block(in + b * 256)) idx[n++] = b; }
                          for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * B, in + idx[i] * 256, B); }
            if (m == 2) { for (size_t b = 0; b < NB; ++b) { __builtin_prefetch((char*)(in + b*256) + 4096); if (!zero_block(in + b * 256)) { std::memcpy(dst + n * B, in + b * 256, B); idx[n++] = b; } } }
            if (m == 3) { for (size_t b = 0; b < NB; ++b) { __builtin_prefetch((char*)(in + b*256) + 4096); if (!zero_block(in + b * 256)) { nt_copy(dst + n * B, (char*)(in + b * 256)); idx[n++] = b; } } _mm_sfence(); }
            if (m == 4) { std::memcpy(dst, in, N); }
            if (m >= 5) { for (size_t b = 0; b < NB; ++b) { __builtin_prefetch((char*)(in + b*256) + 4096); if (!zero_block(in + b * 256)) idx[n++] = b; }
              for (size_t i = 0; i < n; ++i) {
                if (m >= 6 && i + 4 < n) { const char *q = (const char*)(in + idx[i+4]*256); for (int l = 0; l < 1024; l += 64) __builtin_prefetch(q + l); }
                if (m == 5 || m == 7) nt_copy(dst + i * B, (char*)(in + idx[i] * 256)); else std::memcpy(dst + i * B, in + idx[i] * 256, B); }
              _mm_sfence(); }
            ((volatile double*)(sh+64))[(it*8+m)*P+p] = now() - s;
        }
        barrier();
        if (p == 0) { const char *nm[] = {"scan", "scan+pack", "fused", "fused-nt", "memcpy", "pack-nt", "pack-pf", "pack-nt-pf"};
            for (int it = 0; it < iters; ++it) for (int m = 0; m < 8; ++m) { double mx = 0; for (int q = 0; q < P; ++q) mx = std::max(mx, (double)((volatile double*)(sh+64))[(it*8+m)*P+q]); t[m].push_back(mx); }
            for (int m = 0; m < 8; ++m) { std::sort(t[m].begin(), t[m].end()); printf("%-10s %.2f ms\n", nm[m], t[m][t[m].size()/2]*1e3); } }
        fflush(stdout); _exit(0);
    }
    for (int p = 0; p < P; ++p) wait(nullptr);
}
