#include "core/memory_ops.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <unistd.h>
#include <sys/syscall.h>
#include <sched.h>
using namespace mpix::sparse::detail;
int main(int argc, char** argv) {
  int reps = atoi(argv[1]); size_t chunk = atoi(argv[2]) << 10; size_t N = 64u << 20;
  std::byte* a = (std::byte*)aligned_alloc(4096, N); std::byte* b = (std::byte*)aligned_alloc(4096, N);
  memset(a, 1, N); memset(b, 2, N);
  std::vector<double> t[3];
  for (int r = 0; r < reps; ++r) for (int k = 0; k < 3; ++k) {
    auto s = std::chrono::steady_clock::now();
    for (size_t off = 0; off < N; off += chunk) {
      copy_bytes(a + off, b + off, chunk, true);
      if (k == 1) syscall(SYS_getppid);
      if (k == 2) sched_yield();
    }
    store_fence();
    t[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  printf("chunk %zu KiB: none %.2f  getppid %.2f  sched_yield %.2f ms (medians, 64 MiB copy)\n", chunk >> 10, t[0][reps/2], t[1][reps/2], t[2][reps/2]);
}
