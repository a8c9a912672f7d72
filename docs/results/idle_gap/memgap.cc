// The throwaway probe behind "The first call after an idle gap" in docs/performance.md (kept as the
// record, not built): one process, no MPI, no library. Each iteration reads a 64 MiB buffer (one load
// per cache line; STRIDE=1024: one per 4 KiB page) and then copies it, after no gap, a sleep or a busy
// loop of GAP seconds, or a 256 MiB memcpy between other buffers (flush: the caches lose the buffer,
// no time passes); prints the median time of each. HUGE=1 asks for transparent huge pages (madvise).
// Build: g++ -O2 -std=c++17 memgap.cc -o memgap
// Run:   taskset -c 0 ./memgap 20 0.4 & taskset -c 1 ./memgap 20 0.4 & wait   (one per core)
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {
double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char **argv) {
    const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
    const double gap = argc > 2 ? std::atof(argv[2]) : 0.4;
    const std::size_t n = (64u << 20) / 4;
    float *a = (float *)aligned_alloc(4096, n * 4), *b = (float *)aligned_alloc(4096, n * 4);
    const char *huge = std::getenv("HUGE");  // "1" only: run.sh passes HUGE= (empty) for the runs without
    if (huge != nullptr && std::string(huge) == "1") {
        madvise(a, n * 4, MADV_HUGEPAGE);
        madvise(b, n * 4, MADV_HUGEPAGE);
    }
    std::memset(a, 1, n * 4);
    std::memset(b, 0, n * 4);
    const std::size_t stride = std::getenv("STRIDE") ? std::atoi(std::getenv("STRIDE")) : 16;
    const char *kinds[] = {"none", "sleep", "spin", "flush"};
    std::vector<char> flush_from(256u << 20, 1), flush_to(256u << 20);
    std::vector<double> copy[4], read[4];
    volatile float sink = 0;  // keeps the read loop
    (void)sink;
    for (int it = 0; it < iters; ++it)
        for (int k = 0; k < 4; ++k) {
            if (k == 3) std::memcpy(flush_to.data(), flush_from.data(), flush_from.size());
            if (k == 1) std::this_thread::sleep_for(std::chrono::duration<double>(gap));
            if (k == 2) {
                const double until = now() + gap;
                volatile unsigned x = 0;
                while (now() < until)
                    for (int i = 0; i < 1000; ++i)
                        x = x + 1;
            }
            const double s = now();
            float acc = 0;
            for (std::size_t i = 0; i < n; i += stride)
                acc += a[i];
            sink = acc;
            const double e = now();
            std::memcpy(b, a, n * 4);
            const double e2 = now();
            read[k].push_back((e - s) * 1e3);
            copy[k].push_back((e2 - e) * 1e3);
        }
    // Whether the kernel gave huge pages: the process's AnonHugePages (THP is "madvise" here).
    std::ifstream rollup("/proc/self/smaps_rollup");
    for (std::string line; std::getline(rollup, line);)
        if (line.rfind("AnonHugePages:", 0) == 0) std::printf("%s\n", line.c_str());
    for (int k = 0; k < 4; ++k) {
        std::sort(read[k].begin(), read[k].end());
        std::sort(copy[k].begin(), copy[k].end());
        std::printf("%-6s read (first touch) %.2f ms, memcpy after it %.2f ms\n", kinds[k], read[k][read[k].size() / 2],
                    copy[k][copy[k].size() / 2]);
    }
}
