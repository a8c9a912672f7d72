#include "core/memory_ops.h"
#include "core/block_scan.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <random>
#include <unistd.h>
#include <vector>
#include <algorithm>
#include <sys/mman.h>
using namespace mpix::sparse::detail;
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b){ return std::chrono::duration<double,std::milli>(b-a).count(); }
int main(int argc, char** argv) {
  double d = atof(argv[1]); int reps = atoi(argv[2]); size_t N = 64u << 20, B = 1024, nb = N / B;
  std::byte* in = (std::byte*)aligned_alloc(2<<20, N); if (getenv("HP")) madvise(in, N, MADV_HUGEPAGE); memset(in, 0, N);
  std::byte* out = (std::byte*)aligned_alloc(2<<20, N); if (getenv("HP")) madvise(out, N, MADV_HUGEPAGE); memset(out, 0, N);
  std::mt19937 rng(getpid()); std::bernoulli_distribution on(d), on4(std::min(1.0, 4*d));
  for (size_t b = 0; b < nb; ++b) if (on(rng)) for (int i = 0; i < 256; ++i) ((float*)in)[b*256+i] = 1.0f;
  std::vector<uint32_t> idx; for (uint32_t b = 0; b < nb; ++b) if (on4(rng)) idx.push_back(b);
  std::byte* src = (std::byte*)aligned_alloc(4096, idx.size() * B + 4096); memset(src, 2, idx.size() * B);
  BlockLayout layout{N/4, 256, 4}; BlockBitmap bm;
  std::vector<double> ts, tw;
  for (int r = 0; r < reps; ++r) { bm.reset(layout.num_blocks()); auto a = clk::now();
    scan_blocks(in, layout, bm, nullptr); auto b = clk::now();
    write_covered(out, 0, N, src, idx.data(), idx.size(), B, true); auto c = clk::now();
    ts.push_back(ms(a,b)); tw.push_back(ms(b,c)); }
  std::sort(ts.begin(), ts.end()); std::sort(tw.begin(), tw.end());
  printf("d=%.2f scan median %.2f write median %.2f\n", d, ts[reps/2], tw[reps/2]);
}
