// Kept as the record of a probe (docs/performance.md, "Where the ratios stand after the eighth session");
// not built by CMake. Build: mpicxx -O2 -std=c++17 zero_fill.cc -o zero_fill; run one process a core:
// mpirun --oversubscribe --bind-to none -np 2 ./zero_fill ARGS (see main).
#include <mpi.h>
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
static const std::size_t kBytes = 64u << 20;
__attribute__((target("avx512f"))) static void nt512(std::byte *d, std::size_t n) { const __m512i z = _mm512_setzero_si512(); for (std::size_t i = 0; i < n; i += 64) _mm512_stream_si512(reinterpret_cast<__m512i *>(d + i), z); }
__attribute__((target("avx2"))) static void nt256(std::byte *d, std::size_t n) { const __m256i z = _mm256_setzero_si256(); for (std::size_t i = 0; i < n; i += 32) _mm256_stream_si256(reinterpret_cast<__m256i *>(d + i), z); }
static void stosb(std::byte *d, std::size_t n) { asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory"); }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const std::size_t run = std::atoi(argv[1]); const int rounds = std::atoi(argv[2]);
    auto *out = static_cast<std::byte *>(aligned_alloc(4096, kBytes)); std::memset(out, 1, kBytes);
    const char *name[4] = {"nt512", "nt256", "rep stosb", "memset"};
    std::vector<double> t[4]; int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int r = 0; r < rounds; ++r) for (int k = 0; k < 4; ++k) { const int m = (k + r) % 4;
        MPI_Barrier(MPI_COMM_WORLD); double s = MPI_Wtime();
        for (std::size_t o = 0; o < kBytes; o += run) { if (m == 0) nt512(out + o, run); else if (m == 1) nt256(out + o, run); else if (m == 2) stosb(out + o, run); else std::memset(out + o, 0, run); }
        _mm_sfence();
        double e = MPI_Wtime() - s, mx; MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r) t[m].push_back(mx * 1e3);
    }
    if (!rank) for (int m = 0; m < 4; ++m) { std::sort(t[m].begin(), t[m].end()); std::printf("run %zu %-10s %.2f ms\n", run, name[m], t[m][t[m].size()/2]); }
    MPI_Finalize();
}
