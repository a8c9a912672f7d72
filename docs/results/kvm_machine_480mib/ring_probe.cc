// A lead for heap buffers at high density: contributions through a small ring of shared slots that
// stay in the cache (ordinary stores), against fresh shared memory per call with streaming stores
// (what the library does). Two processes, pipelined: the worker copies 256 KiB chunks of its 16 MiB
// input into shared memory and publishes each; the aggregator waits for it and adds it into its
// 256 KiB window. Time from the start until the aggregator has added the last chunk.
#include <immintrin.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using clk = std::chrono::steady_clock;
constexpr size_t S = 16u << 20, C = 256u << 10, NC = S / C;
struct Ctl { std::atomic<long> go{0}, published{-1}, consumed{-1}, done{0}; std::atomic<long> copy_ns{0}; };
__attribute__((noinline)) void nt_copy(char *d, const char *s, size_t n) { for (size_t i = 0; i < n; i += 64) { __builtin_prefetch(s + i + 4096); auto *q = (const __m128i *)(s + i); __m128i a = _mm_loadu_si128(q), b = _mm_loadu_si128(q + 1), c = _mm_loadu_si128(q + 2), e = _mm_loadu_si128(q + 3); _mm_stream_si128((__m128i *)(d + i), a); _mm_stream_si128((__m128i *)(d + i + 16), b); _mm_stream_si128((__m128i *)(d + i + 32), c); _mm_stream_si128((__m128i *)(d + i + 48), e); } _mm_sfence(); }
__attribute__((noinline)) void add(float *__restrict acc, const float *__restrict x, size_t n) { for (size_t i = 0; i < n; ++i) acc[i] += x[i]; }
int main(int argc, char **argv) {
  int reps = atoi(argv[1]); int slots = argc > 2 ? atoi(argv[2]) : 8;
  auto *ctl = (Ctl *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0); new (ctl) Ctl();
  char *fresh = (char *)mmap(nullptr, S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0); memset(fresh, 0, S);
  char *ring = (char *)mmap(nullptr, C * slots, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0); memset(ring, 0, C * slots);
  pid_t w = fork();
  if (w == 0) {  // worker
    char *in = (char *)aligned_alloc(4096, S); for (size_t i = 0; i < S / 4; ++i) ((float *)in)[i] = 1.0f;
    char *evict = (char *)aligned_alloc(4096, 64u << 20);
    for (long round = 1;; ++round) {
      while (ctl->go.load() < round) _mm_pause();
      if (ctl->go.load() < 0) _exit(0);
      const int mode = (round - 1) % 3;
      long busy = 0;
      for (size_t i = 0; i < NC; ++i) {
        if (mode != 0) while (ctl->consumed.load() < (long)i - slots) _mm_pause();
        auto c0 = clk::now();
        if (mode == 0) nt_copy(fresh + i * C, in + i * C, C);
        else { while (ctl->consumed.load() < (long)i - slots) _mm_pause(); char *d = ring + (i % slots) * C; if (mode == 1) memcpy(d, in + i * C, C); else nt_copy(d, in + i * C, C); }
        busy += std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - c0).count();
        ctl->published.store(i);
      }
      ctl->copy_ns.store(busy);
      memset(evict, (int)round, 64u << 20);  // the input out of the caches for the next round, as in a call
      ctl->done.store(round);
    }
  }
  std::vector<float> acc(C / 4);
  std::vector<double> t[3], tw[3], ta[3];
  for (int r = 0; r < reps * 3; ++r) {
    const int mode = r % 3;
    ctl->published.store(-1); ctl->consumed.store(-1);
    auto a = clk::now();
    ctl->go.store(r + 1);
    long abusy = 0;
    for (size_t i = 0; i < NC; ++i) {
      while (ctl->published.load() < (long)i) _mm_pause();
      auto c0 = clk::now();
      const char *src = mode == 0 ? fresh + i * C : ring + (i % slots) * C;
      add(acc.data(), (const float *)src, C / 4);
      abusy += std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - c0).count();
      ctl->consumed.store(i);
    }
    ta[mode].push_back(abusy / 1e6);
    t[mode].push_back(std::chrono::duration<double, std::milli>(clk::now() - a).count());
    while (ctl->done.load() < r + 1) _mm_pause();
    tw[mode].push_back(ctl->copy_ns.load() / 1e6);
  }
  ctl->go.store(-1); kill(w, SIGKILL); waitpid(w, nullptr, 0);
  const char *nm[] = {"fresh_streaming", "ring_ordinary", "ring_streaming"};
  for (int k = 0; k < 3; ++k) { for (auto *v : {&t[k], &tw[k], &ta[k]}) std::sort(v->begin(), v->end()); printf("%s %.2f (worker copies %.2f, aggregator adds %.2f)  ", nm[k], t[k][reps / 2], tw[k][reps / 2], ta[k][reps / 2]); }
  printf("ms per 16 MiB, ring of %d slots (chk %.0f)\n", slots, acc[3]);
}
