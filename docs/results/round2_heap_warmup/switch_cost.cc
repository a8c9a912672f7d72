// Kept as the record of a probe (docs/performance.md, "MPI_Allreduce's fresh pages"); not built by CMake. Build: g++ -O2 switch_cost.cc
// Cost of a switch between two processes on one CPU: sched_yield ping-pong, and pipe ping-pong;
// also the cost of sched_yield alone (nobody else runnable) and of a getppid syscall.
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); sched_setaffinity(0, sizeof s, &s); }
int main() {
  const int N = 200000;
  pin(0);
  double t = now(); for (int i = 0; i < N; ++i) getppid(); printf("syscall getppid: %.0f ns\n", (now()-t)/N*1e9);
  t = now(); for (int i = 0; i < N; ++i) sched_yield(); printf("sched_yield alone: %.0f ns\n", (now()-t)/N*1e9);
  // two processes yielding on cpu 0
  pid_t c = fork();
  if (c == 0) { pin(0); double e = now() + 3; while (now() < e) sched_yield(); _exit(0); }
  usleep(1000);
  t = now(); for (int i = 0; i < N; ++i) sched_yield(); double y = now() - t;
  waitpid(c, nullptr, 0);
  printf("sched_yield with a yielding peer on the cpu: %.0f ns per yield (a switch there and back)\n", y/N*1e9);
  int a[2], b[2]; if (pipe(a) || pipe(b)) return 1; char x = 0;
  c = fork();
  if (c == 0) { pin(0); for (int i = 0; i < N; ++i) { if (read(a[0], &x, 1) != 1 || write(b[1], &x, 1) != 1) _exit(1); } _exit(0); }
  t = now(); for (int i = 0; i < N; ++i) { if (write(a[1], &x, 1) != 1 || read(b[0], &x, 1) != 1) return 1; } double p = now() - t;
  waitpid(c, nullptr, 0);
  printf("pipe round trip on one cpu: %.0f ns (two switches)\n", p/N*1e9);
  // first touch of fresh pages: private anonymous, and a shared memfd (as the library's segments)
  const size_t bytes = size_t{64} << 20, pages = bytes / 4096;
  for (int shared = 0; shared < 2; ++shared) {
    int fd = shared ? memfd_create("probe", 0) : -1;
    if (shared && ftruncate(fd, bytes) != 0) return 1;
    char *m = (char *)mmap(nullptr, bytes, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS, fd, 0);
    t = now(); for (size_t i = 0; i < pages; ++i) m[i * 4096] = 1; double f = now() - t;
    t = now(); for (size_t i = 0; i < pages; ++i) m[i * 4096] = 2; double w = now() - t;
    printf("first write to a fresh %s 4 KiB page: %.0f ns (a second write: %.0f ns)\n", shared ? "memfd" : "anonymous", f / pages * 1e9, w / pages * 1e9);
    munmap(m, bytes); if (fd >= 0) close(fd);
  }
}
