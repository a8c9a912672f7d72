// Bandwidth of the device boundary's kernels against the device's own copy, in one run: the block
// scan (reads N bytes) plus the compaction of the non-zero blocks (reads and writes d*N), timed with
// CUDA events, against cudaMemcpy device-to-device of N bytes (reads and writes N). Reports each
// in GB/s of bytes moved and the kernels' share of the copy bandwidth (goal: at least 0.8).
// Medians of --repeats runs. Usage: device_kernels_bandwidth [--repeats R] [--block B]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/block_kernels.h"
#include "median.h"

namespace {

using mpix::sparse::detail::cuda::BlockGeometry;

void check(cudaError_t rc, const char *what) {
    if (rc != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(rc));
        std::exit(1);
    }
}

template <class T>
T *device_alloc(std::size_t bytes) {
    void *p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return static_cast<T *>(p);
}

}  // namespace

int main(int argc, char **argv) {
    int repeats = 11;
    std::uint64_t block_elems = 256;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--block") == 0) block_elems = std::strtoull(argv[i + 1], nullptr, 10);
    }
    int device = 0, sms = 0;
    cudaDeviceProp prop{};
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    sms = prop.multiProcessorCount;
    std::printf("# device %d: %s, %d SMs; float blocks of %llu elements; median of %d runs\n", device, prop.name, sms,
                static_cast<unsigned long long>(block_elems), repeats);
    std::printf("%12s %9s %12s %12s %12s %12s %8s\n", "Size(B)", "Density", "Scan(us)", "Compact(us)", "Kernels(GB/s)",
                "Copy(GB/s)", "Share");
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    for (std::uint64_t bytes : {std::uint64_t{64} << 20, std::uint64_t{256} << 20, std::uint64_t{1} << 30}) {
        const BlockGeometry g{(bytes / 4 + block_elems - 1) / block_elems, block_elems * 4, bytes};
        auto *data = device_alloc<std::byte>(bytes);
        auto *copy = device_alloc<std::byte>(bytes);
        auto *packed = device_alloc<std::byte>(bytes);
        auto *flags = device_alloc<std::uint8_t>(g.num_blocks);
        auto *words = device_alloc<std::uint64_t>((g.num_blocks + 63) / 64 * 8);
        auto *list = device_alloc<std::uint64_t>(g.num_blocks * 8);
        for (double density : {0.001, 0.01, 0.1, 0.5, 1.0}) {
            // Non-zero blocks at random; one non-zero float at the end of each (the scan reads it all).
            std::mt19937_64 rng(7);
            std::vector<std::uint64_t> chosen;
            check(cudaMemset(data, 0, bytes), "cudaMemset");
            for (std::uint64_t k = 0; k < g.num_blocks; ++k)
                if (std::uniform_real_distribution<>(0, 1)(rng) < density) chosen.push_back(k);
            const float one = 1.0f;
            for (std::uint64_t k : chosen) {
                const std::uint64_t end = std::min<std::uint64_t>(bytes, (k + 1) * g.block_bytes);
                check(cudaMemcpy(data + end - 4, &one, 4, cudaMemcpyHostToDevice), "set");
            }
            check(cudaMemcpy(list, chosen.data(), chosen.size() * 8, cudaMemcpyHostToDevice), "list");
            std::vector<double> scan_us, compact_us, copy_us;
            for (int r = 0; r < repeats + 1; ++r) {  // the first run warms up
                float ms = 0;
                check(cudaEventRecord(a, stream), "record");
                check(mpix::sparse::detail::cuda::launch_scan(data, g, flags, words, sms, stream), "scan");
                check(cudaEventRecord(b, stream), "record");
                check(cudaEventSynchronize(b), "sync");
                check(cudaEventElapsedTime(&ms, a, b), "elapsed");
                if (r > 0) scan_us.push_back(ms * 1e3);
                check(cudaEventRecord(a, stream), "record");
                check(mpix::sparse::detail::cuda::launch_gather(data, g, list, chosen.size(), packed, sms, stream),
                      "gather");
                check(cudaEventRecord(b, stream), "record");
                check(cudaEventSynchronize(b), "sync");
                check(cudaEventElapsedTime(&ms, a, b), "elapsed");
                if (r > 0) compact_us.push_back(ms * 1e3);
                check(cudaEventRecord(a, stream), "record");
                check(cudaMemcpyAsync(copy, data, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
                check(cudaEventRecord(b, stream), "record");
                check(cudaEventSynchronize(b), "sync");
                check(cudaEventElapsedTime(&ms, a, b), "elapsed");
                if (r > 0) copy_us.push_back(ms * 1e3);
            }
            const double moved = static_cast<double>(bytes) + 2.0 * static_cast<double>(chosen.size() * g.block_bytes);
            const double kernels_us = bench::median(scan_us) + bench::median(compact_us);
            const double kernels_gbs = moved / kernels_us / 1e3;
            const double copy_gbs = 2.0 * static_cast<double>(bytes) / bench::median(copy_us) / 1e3;
            std::printf("%12llu %9.3f %12.1f %12.1f %12.1f %12.1f %8.2f\n", static_cast<unsigned long long>(bytes),
                        density, bench::median(scan_us), bench::median(compact_us), kernels_gbs, copy_gbs,
                        kernels_gbs / copy_gbs);
        }
        for (void *p : {static_cast<void *>(data), static_cast<void *>(copy), static_cast<void *>(packed),
                        static_cast<void *>(flags), static_cast<void *>(words), static_cast<void *>(list)})
            cudaFree(p);
    }
    return 0;
}
