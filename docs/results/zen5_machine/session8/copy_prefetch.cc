// Kept as the record of a probe (docs/performance.md, "Where the ratios stand after the eighth session");
// not built by CMake. Build: mpicxx -O2 -std=c++17 copy_prefetch.cc -o copy_prefetch; run one process a core:
// mpirun --oversubscribe --bind-to none -np 2 ./copy_prefetch ARGS (see main).
// streaming copy of 64 MiB in runs of RUN bytes (every other run skipped when GAP=1), prefetch variants; one process a core
#include <mpi.h>
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
static const std::size_t kBytes = 64u << 20;
template <int MODE> __attribute__((target("avx512f"))) static void cp(std::byte *dst, const std::byte *src, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 64) {
        if (MODE == 1) __builtin_prefetch(src + i + 4096);
        if (MODE == 2 && (reinterpret_cast<std::uintptr_t>(src + i) & 1023) == 0) __builtin_prefetch(src + i + 4096);
        _mm512_stream_si512(reinterpret_cast<__m512i *>(dst + i), _mm512_loadu_si512(src + i));
    }
}
using F = void (*)(std::byte *, const std::byte *, std::size_t);
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const std::size_t run = std::atoi(argv[1]); const int rounds = std::atoi(argv[2]); const int gap = argc > 3 ? std::atoi(argv[3]) : 0;
    auto *in = static_cast<std::byte *>(aligned_alloc(4096, kBytes)), *out = static_cast<std::byte *>(aligned_alloc(4096, kBytes));
    std::memset(in, 3, kBytes); std::memset(out, 1, kBytes);
    F f[3] = {cp<0>, cp<1>, cp<2>}; const char *name[3] = {"no prefetch", "pf per line", "pf per KiB"};
    std::vector<double> t[3]; int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int r = 0; r < rounds; ++r) for (int k = 0; k < 3; ++k) { const int m = (k + r) % 3;
        MPI_Barrier(MPI_COMM_WORLD); double s = MPI_Wtime();
        for (std::size_t o = 0; o < kBytes; o += run * (gap ? 2 : 1)) f[m](out + o, in + o, run);
        _mm_sfence();
        double e = MPI_Wtime() - s, mx; MPI_Allreduce(&e, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r) t[m].push_back(mx * 1e3);
    }
    if (!rank) for (int m = 0; m < 3; ++m) { std::sort(t[m].begin(), t[m].end()); std::printf("run %zu gap %d %-12s %.2f ms\n", run, gap, name[m], t[m][t[m].size()/2]); }
    MPI_Finalize();
}
