// Reader side cost: a 16 MiB region written by another process (streaming or regular stores), then read
// by this process (sum into a 256 KiB window) - against reading a private region.
#include <immintrin.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
constexpr size_t S = 16u << 20; static size_t W = 256u << 10;
__attribute__((noinline)) void add(float *__restrict acc, const float *__restrict x, size_t n) { for (size_t i = 0; i < n; ++i) acc[i] += x[i]; }
__attribute__((noinline)) void nt_copy(char *d, const char *s, size_t n) { for (size_t i = 0; i < n; i += 64) { auto *q = (const __m128i *)(s + i); __m128i a = _mm_loadu_si128(q), b = _mm_loadu_si128(q + 1), c = _mm_loadu_si128(q + 2), e = _mm_loadu_si128(q + 3); _mm_stream_si128((__m128i *)(d + i), a); _mm_stream_si128((__m128i *)(d + i + 16), b); _mm_stream_si128((__m128i *)(d + i + 32), c); _mm_stream_si128((__m128i *)(d + i + 48), e); } _mm_sfence(); }
int main(int argc, char **argv) {
  int reps = atoi(argv[1]); W = atoi(argv[2]) << 10;
  float *shared = (float *)mmap(nullptr, S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  float *priv = (float *)aligned_alloc(4096, S);
  for (size_t i = 0; i < S / 4; ++i) priv[i] = 1.0f;
  std::memset(shared, 0, S);
  int go[2], done[2]; if (pipe(go) || pipe(done)) return 1;
  if (fork() == 0) {
    float *src = (float *)aligned_alloc(4096, S); for (size_t i = 0; i < S / 4; ++i) src[i] = 2.0f;
    char c;
    while (read(go[0], &c, 1) == 1 && c != 'q') {
      if (c == 'n') nt_copy((char *)shared, (const char *)src, S); else memcpy(shared, src, S);
      if (write(done[1], &c, 1) != 1) return 1;
    }
    _exit(0);
  }
  std::vector<float> acc(W / 4);
  std::vector<double> t[4];
  auto read_all = [&](const float *p) { auto a = clk::now(); for (size_t o = 0; o < S; o += W) add(acc.data(), p + o / 4, W / 4); return ms(a, clk::now()); };
  for (int r = 0; r < reps; ++r) {
    char c = 'n', d;
    if (write(go[1], &c, 1) != 1 || read(done[0], &d, 1) != 1) return 1;
    t[0].push_back(read_all(shared));   // just streamed by the other process
    t[1].push_back(read_all(shared));   // again
    c = 'm'; if (write(go[1], &c, 1) != 1 || read(done[0], &d, 1) != 1) return 1;
    t[2].push_back(read_all(shared));   // just memcpy'd by the other process
    t[3].push_back(read_all(priv));     // private
  }
  char q = 'q'; if (write(go[1], &q, 1) != 1) return 1; wait(nullptr);
  const char *nm[] = {"after_nt", "again", "after_memcpy", "private"};
  for (int k = 0; k < 4; ++k) { std::sort(t[k].begin(), t[k].end()); printf("%s %.2f  ", nm[k], t[k][reps / 2]); }
  printf("ms per 16 MiB (chk %.0f)\n", acc[5]);
}
