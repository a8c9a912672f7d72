#include "core/line_streams.h"
#include "core/memory_ops.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>
#include <algorithm>
using namespace mpix::sparse::detail;
int main(int argc, char** argv) {
  int reps = atoi(argv[1]); size_t N = 64u << 20;
  std::byte* a = (std::byte*)aligned_alloc(4096, N); std::byte* b = (std::byte*)aligned_alloc(4096, N);
  memset(a, 1, N); memset(b, 2, N);
  const LineStreams* w[2] = {line_streams_of(StreamWidth::sse2), line_streams_of(StreamWidth::avx512)};
  std::vector<double> tz[2], tc[2];
  for (int r = 0; r < reps; ++r) for (int k = 0; k < 2; ++k) {
    int x = (r & 1) ? 1 - k : k;  // alternate which goes first
    auto s = std::chrono::steady_clock::now(); w[x]->zero(a, N); store_fence();
    auto m = std::chrono::steady_clock::now(); w[x]->copy(a, b, N); store_fence();
    auto e = std::chrono::steady_clock::now();
    tz[x].push_back(std::chrono::duration<double, std::milli>(m - s).count());
    tc[x].push_back(std::chrono::duration<double, std::milli>(e - m).count());
  }
  for (int x = 0; x < 2; ++x) { std::sort(tz[x].begin(), tz[x].end()); std::sort(tc[x].begin(), tc[x].end()); }
  printf("zero sse2 %.2f avx512 %.2f | copy sse2 %.2f avx512 %.2f (medians, ms, 64 MiB)\n", tz[0][reps/2], tz[1][reps/2], tc[0][reps/2], tc[1][reps/2]);
}
