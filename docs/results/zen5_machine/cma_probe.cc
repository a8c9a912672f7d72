// A lead for heap buffers at high density: can an aggregator read a worker's private input with one
// kernel copy (process_vm_readv, what UCX's CMA transport uses) more cheaply than the worker copying
// it into a shared segment and the aggregator reading it from there? Two processes, run one after
// the other (no overlap), 16 MiB of floats (one aggregator's shard of a 64 MiB call), 256 KiB windows.
#include "core/memory_ops.h"
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using namespace mpix::sparse::detail;
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
constexpr size_t kShard = 16u << 20, kWindow = 256u << 10;
__attribute__((noinline)) void add(float *acc, const float *x, size_t n) { for (size_t i = 0; i < n; ++i) acc[i] += x[i]; }
int main(int argc, char **argv) {
  int reps = atoi(argv[1]);
  float *shared = (float *)mmap(nullptr, kShard, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  float *input = (float *)aligned_alloc(4096, kShard);  // the worker's private input (copied on fork, then its own)
  for (size_t i = 0; i < kShard / 4; ++i) input[i] = 1.0f;
  std::memset(shared, 0, kShard);
  int go[2], done[2]; if (pipe(go) || pipe(done)) return 1;
  pid_t worker = fork();
  if (worker == 0) {  // the worker: on 'c', copies its input into the shared segment; on 'w', just waits
    for (size_t i = 0; i < kShard / 4; ++i) input[i] = 2.0f;  // its own pages
    char c; double t = 0;
    while (read(go[0], &c, 1) == 1 && c != 'q') {
      auto a = clk::now();
      if (c == 'c') { copy_bytes((std::byte *)shared, (const std::byte *)input, kShard, true); store_fence(); }
      t = ms(a, clk::now());
      if (write(done[1], &t, sizeof t) != sizeof t) return 1;
    }
    _exit(0);
  }
  std::vector<float> acc(kWindow / 4), scratch(kWindow / 4);
  std::vector<double> seg, cma, seg_worker;
  for (int r = 0; r < reps; ++r) {
    double tw = 0; char c = 'c';
    if (write(go[1], &c, 1) != 1 || read(done[0], &tw, sizeof tw) != sizeof tw) return 1;
    auto a = clk::now();
    for (size_t off = 0; off < kShard; off += kWindow) add(acc.data(), shared + off / 4, kWindow / 4);
    seg.push_back(tw + ms(a, clk::now())); seg_worker.push_back(tw);
    a = clk::now();
    for (size_t off = 0; off < kShard; off += kWindow) {
      iovec local{scratch.data(), kWindow}, remote{(char *)input + off, kWindow};
      if (process_vm_readv(worker, &local, 1, &remote, 1, 0) != (ssize_t)kWindow) { perror("process_vm_readv"); return 1; }
      add(acc.data(), scratch.data(), kWindow / 4);
    }
    cma.push_back(ms(a, clk::now()));
  }
  char q = 'q'; if (write(go[1], &q, 1) != 1) return 1; waitpid(worker, nullptr, 0);
  std::sort(seg.begin(), seg.end()); std::sort(cma.begin(), cma.end()); std::sort(seg_worker.begin(), seg_worker.end());
  printf("16 MiB shard: segment (worker copy %.2f + aggregator reduce) %.2f ms, CMA (read + reduce) %.2f ms; medians of %d, check %.0f\n",
         seg_worker[reps / 2], seg[reps / 2], cma[reps / 2], reps, acc[7]);
}
