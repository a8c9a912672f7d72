// The throwaway probe behind the cross-core figure of "The first call after an idle gap" in
// docs/performance.md (kept as the record, not built). Build: g++ -O2 -std=c++17 -pthread pingpong.cc
// Run: ./a.out (prints the round trip of a cache line between threads on cpu 0 and cpu 1, then the rate
// of a producer/consumer copy through a 1 MiB ring between them).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>
static void pin(int c) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(c, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
alignas(64) std::atomic<int> flag{0};
int main() {
    const int rounds = 200000;
    std::thread t([&] {
        pin(1);
        for (int i = 0; i < rounds; ++i) {
            while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
            }
            flag.store(2 * i + 2, std::memory_order_release);
        }
    });
    pin(0);
    auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < rounds; ++i) {
        flag.store(2 * i + 1, std::memory_order_release);
        while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
        }
    }
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s).count() / rounds;
    t.join();
    std::printf("round trip cpu0<->cpu1: %.0f ns\n", ns);
    // Producer writes 256 KiB chunks into a 1 MiB ring, consumer copies them out: 256 MiB in all.
    const size_t chunk = 256 << 10, slots = 4, total = 256u << 20;
    std::vector<char> ring(chunk * slots), src(chunk, 1), dst(chunk);
    std::atomic<size_t> produced{0}, consumed{0};
    std::thread c([&] {
        pin(1);
        for (size_t k = 0; k < total / chunk; ++k) {
            while (produced.load(std::memory_order_acquire) <= k) {
            }
            std::memcpy(dst.data(), &ring[(k % slots) * chunk], chunk);
            consumed.store(k + 1, std::memory_order_release);
        }
    });
    s = std::chrono::steady_clock::now();
    for (size_t k = 0; k < total / chunk; ++k) {
        while (k >= consumed.load(std::memory_order_acquire) + slots) {
        }
        std::memcpy(&ring[(k % slots) * chunk], src.data(), chunk);
        produced.store(k + 1, std::memory_order_release);
    }
    c.join();
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    std::printf("cross-core stream: %.1f GB/s\n", total / sec / 1e9);
}
