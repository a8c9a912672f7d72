// What a dense allreduce through shared memory costs on this machine, without any library: the
// reference the 50-100% rows of docs/performance.md are argued against. P processes (fork, no MPI)
// each hold N floats of private input, all non-zero, and run, interleaved round by round:
//   floor     one memcpy of the buffer on every process at once (the benchmark's floor);
//   two-copy  the textbook shared-memory reduce-scatter + allgather: every process copies the
//             shards it does not own into a shared segment, reduces its own shard from the P
//             copies in cache-sized windows, publishes it, and copies the other shards out;
//   cma-pull  one copy fewer: each owner reads the other processes' private shards with
//             process_vm_readv into a cache-resident window (kernel-assisted single copy, as
//             UCX's CMA transport does) and publishes its shard as above;
//   in-place  inputs and outputs in memory every process maps (what MPIX_Sparse_alloc_mem gives):
//             each owner reduces its shard from the other processes' inputs in place, straight
//             into its output, and copies the other shards from their owners' outputs.
// Prints the median time of each scheme and its median ratio to the floor of the same round.
// Usage: shm_allreduce_bound [processes=4] [MiB=64] [rounds=9]
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "median.h"

namespace {

constexpr int kMaxProcesses = 16;
constexpr std::size_t kWindow = 65536;  // floats: a 256 KiB window stays in L2
constexpr int kSchemes = 4;
const char *const kNames[kSchemes] = {"floor", "two-copy", "cma-pull", "in-place"};

struct Shared {
    std::atomic<int> arrived{0};
    std::atomic<int> generation{0};
    pid_t pid[kMaxProcesses];
    float *input[kMaxProcesses];           // each process's private input, as its owner sees it
    std::atomic<bool> cma_refused{false};  // process_vm_readv not permitted (e.g. a container's seccomp)
};

void *map_shared(std::size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    return p;
}

// Yields while waiting: processes outnumber cores, as in the benchmark.
void barrier(Shared &s, int processes) {
    const int generation = s.generation.load();
    if (s.arrived.fetch_add(1) == processes - 1) {
        s.arrived.store(0);
        s.generation.fetch_add(1);
        return;
    }
    while (s.generation.load() == generation)
        sched_yield();
}

void add(float *__restrict acc, const float *__restrict in, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        acc[i] += in[i];
}

void sum(float *__restrict out, const float *__restrict a, const float *__restrict b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        out[i] = a[i] + b[i];
}

}  // namespace

int main(int argc, char **argv) {
    const int processes = argc > 1 ? std::atoi(argv[1]) : 4;
    const std::size_t count = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64) << 18;  // MiB of floats
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 9;
    const std::size_t shard = count / static_cast<std::size_t>(processes);
    if (processes < 2 || processes > kMaxProcesses || shard % kWindow != 0 || rounds < 1) {
        std::fprintf(stderr, "processes 2-%d, MiB a multiple of processes, rounds >= 1\n", kMaxProcesses);
        return 2;
    }
    auto &s = *new (map_shared(sizeof(Shared))) Shared;
    // contributions[q][a]: process q's copy of shard a; results[a]: the reduced shard a.
    auto *contributions = static_cast<float *>(map_shared(count * sizeof(float) * processes));
    auto *results = static_cast<float *>(map_shared(count * sizeof(float)));
    // The in-place scheme's buffers: process p's input and output, mapped by every process.
    auto *shared_inputs = static_cast<float *>(map_shared(count * sizeof(float) * processes));
    auto *shared_outputs = static_cast<float *>(map_shared(count * sizeof(float) * processes));

    int me = 0;
    for (int p = 1; p < processes; ++p)
        if (fork() == 0) {
            me = p;
            break;
        }
    std::vector<float> input(count), output(count), window(kWindow);
    float *my_shared_input = shared_inputs + me * count, *my_shared_output = shared_outputs + me * count;
    for (std::size_t i = 0; i < count; ++i)
        my_shared_input[i] = input[i] = static_cast<float>(i % 7 + static_cast<std::size_t>(me));
    s.pid[me] = getpid();
    s.input[me] = input.data();
    barrier(s, processes);

    auto publish_and_gather = [&](const float *mine) {
        std::memcpy(results + me * shard, mine, shard * sizeof(float));
        barrier(s, processes);
        for (int a = 0; a < processes; ++a)
            if (a != me) std::memcpy(output.data() + a * shard, results + a * shard, shard * sizeof(float));
    };
    std::vector<double> times[kSchemes];
    bool wrong = false;                                 // this process's output was checked and differed
    for (int round = 0; round < rounds + 1; ++round) {  // round 0 warms up
        for (int scheme = 0; scheme < kSchemes; ++scheme) {
            std::fill(output.begin(), output.end(), -1.0f);
            float *out = scheme == 3 ? my_shared_output : output.data();
            if (scheme == 3) std::fill(out, out + count, -1.0f);
            barrier(s, processes);
            const auto start = std::chrono::steady_clock::now();
            float *mine = out + me * shard;
            if (scheme == 0) {
                std::memcpy(output.data(), input.data(), count * sizeof(float));
            } else if (scheme == 1) {
                for (int a = 0; a < processes; ++a)
                    if (a != me)
                        std::memcpy(contributions + (me * processes + a) * shard, input.data() + a * shard,
                                    shard * sizeof(float));
                barrier(s, processes);
                std::memcpy(mine, input.data() + me * shard, shard * sizeof(float));
                for (std::size_t w = 0; w < shard; w += kWindow)
                    for (int q = 0; q < processes; ++q)
                        if (q != me) add(mine + w, contributions + (q * processes + me) * shard + w, kWindow);
                publish_and_gather(mine);
            } else if (scheme == 3) {
                // Window by window: the first two inputs summed into the output, the others added.
                auto in = [&](int q, std::size_t w) { return shared_inputs + q * count + me * shard + w; };
                for (std::size_t w = 0; w < shard; w += kWindow) {
                    sum(mine + w, in(me, w), in(me == 0 ? 1 : 0, w), kWindow);
                    for (int q = 0; q < processes; ++q)
                        if (q != me && q != (me == 0 ? 1 : 0)) add(mine + w, in(q, w), kWindow);
                }
                barrier(s, processes);
                for (int a = 0; a < processes; ++a)
                    if (a != me)
                        std::memcpy(out + a * shard, shared_outputs + a * count + a * shard, shard * sizeof(float));
            } else {
                std::memcpy(mine, input.data() + me * shard, shard * sizeof(float));
                for (std::size_t w = 0; w < shard && !s.cma_refused.load(); w += kWindow)
                    for (int q = 0; q < processes; ++q) {
                        if (q == me) continue;
                        iovec local{window.data(), kWindow * sizeof(float)};
                        iovec remote{s.input[q] + me * shard + w, kWindow * sizeof(float)};
                        if (process_vm_readv(s.pid[q], &local, 1, &remote, 1, 0) !=
                            static_cast<ssize_t>(kWindow * sizeof(float))) {
                            s.cma_refused.store(true);  // the others still meet at the barriers
                            break;
                        }
                        add(mine + w, window.data(), kWindow);
                    }
                publish_and_gather(mine);
            }
            barrier(s, processes);
            if (round > 0)
                times[scheme].push_back(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            // Every process checks its output: each element is the sum over processes of (i % 7 + p).
            if (scheme > 0 && round == 1 && !(scheme == 2 && s.cma_refused.load()))
                for (std::size_t i = 0; i < count; i += 4099) {
                    const auto want =
                        static_cast<float>(processes * static_cast<int>(i % 7) + processes * (processes - 1) / 2);
                    if (out[i] != want) {  // reported; the others still meet this process at the barriers
                        std::fprintf(stderr, "%s: element %zu is %g, not %g\n", kNames[scheme], i, out[i], want);
                        wrong = true;
                        break;
                    }
                }
        }
    }
    if (me != 0) return wrong ? 1 : 0;
    int status = 0;
    while (wait(&status) > 0)
        wrong |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;  // a process whose output differed
    std::printf("# %d processes, %zu MiB of floats each, %d rounds (medians)\n", processes, count * sizeof(float) >> 20,
                rounds);
    for (int k = 0; k < kSchemes; ++k) {
        if (k == 2 && s.cma_refused.load()) {
            std::printf("%-9s process_vm_readv not permitted here\n", kNames[k]);
            continue;
        }
        std::vector<double> ratio;
        for (std::size_t r = 0; r < times[k].size(); ++r)
            ratio.push_back(times[k][r] / times[0][r]);
        std::printf("%-9s %8.2f ms  /floor %5.2f\n", kNames[k], bench::median(times[k]) * 1e3, bench::median(ratio));
    }
    if (wrong) std::printf("# OUTPUT CHECK FAILED (see above)\n");
    return wrong ? 1 : 0;
}
