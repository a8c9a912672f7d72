// Kernels of the device boundary. Work is cut into items of at most kChunkBytes of one block, one
// warp per item, so that large blocks still spread over every SM and small ones keep lanes busy;
// blocks of at most kSmallBlockBytes take one thread each. Loads and stores use the widest word
// that the addresses, the block size and the vector size all allow (up to 16 bytes).
#include "cuda/block_kernels.h"

#include <algorithm>

namespace mpix::sparse::detail::cuda {
namespace {

constexpr std::uint64_t kChunkBytes = 4096;
constexpr std::uint64_t kSmallBlockBytes = 64;
constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

struct Work {
    BlockGeometry g;
    std::uint64_t chunks;  // items per block (warp mode)
};

__device__ inline bool nonzero(uint4 v) {
    return (v.x | v.y | v.z | v.w) != 0;
}
template <class W>
__device__ inline bool nonzero(W v) {
    return v != 0;
}
template <class W>
__device__ inline W zero_word() {
    return W{};
}

__device__ inline std::uint64_t block_len(const BlockGeometry &g, std::uint64_t k) {
    const std::uint64_t left = g.total_bytes - k * g.block_bytes;
    return left < g.block_bytes ? left : g.block_bytes;
}

__device__ inline std::uint64_t global_thread() {
    return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ inline std::uint64_t thread_count() {
    return std::uint64_t{gridDim.x} * blockDim.x;
}

// Warp mode: calls fn(k, begin, end, lane) for item (block k, byte range [begin, end) of it), the
// same values across the warp.
template <class Fn>
__device__ inline void for_each_item(const Work &w, std::uint64_t blocks, Fn fn) {
    const std::uint64_t warps = thread_count() / 32;
    const int lane = static_cast<int>(threadIdx.x & 31);
    const std::uint64_t items = blocks * w.chunks;
    for (std::uint64_t item = global_thread() / 32; item < items; item += warps) {
        const std::uint64_t i = item / w.chunks;
        const std::uint64_t begin = (item % w.chunks) * kChunkBytes;
        fn(i, begin, lane);
    }
}

template <class W>
__global__ void scan_warps(const std::byte *data, Work w, std::uint8_t *flags) {
    for_each_item(w, w.g.num_blocks, [&](std::uint64_t k, std::uint64_t begin, int lane) {
        const std::uint64_t len = block_len(w.g, k);
        if (begin >= len) return;
        const std::uint64_t end = min(len, begin + kChunkBytes);
        const W *p = reinterpret_cast<const W *>(data + k * w.g.block_bytes + begin);
        const std::uint64_t n = (end - begin) / sizeof(W);
        bool nz = false;
        for (std::uint64_t j = lane; j < n; j += 32)
            nz |= nonzero(p[j]);
        if (__any_sync(kFullMask, nz) && lane == 0) flags[k] = 1;
    });
}

template <class W>
__global__ void scan_threads(const std::byte *data, BlockGeometry g, std::uint8_t *flags) {
    for (std::uint64_t k = global_thread(); k < g.num_blocks; k += thread_count()) {
        const W *p = reinterpret_cast<const W *>(data + k * g.block_bytes);
        const std::uint64_t n = block_len(g, k) / sizeof(W);
        bool nz = false;
        for (std::uint64_t j = 0; j < n; ++j)
            nz |= nonzero(p[j]);
        flags[k] = nz ? 1 : 0;
    }
}

__global__ void pack_flags(const std::uint8_t *flags, std::uint64_t blocks, std::uint64_t *words) {
    const std::uint64_t n = (blocks + 63) / 64;
    for (std::uint64_t i = global_thread(); i < n; i += thread_count()) {
        std::uint64_t word = 0;
        const std::uint64_t end = min(blocks, (i + 1) * 64);
        for (std::uint64_t k = i * 64; k < end; ++k)
            word |= std::uint64_t{flags[k]} << (k - i * 64);
        words[i] = word;
    }
}

// Copies between block blocks[i] of the dense vector and slot i of the packed staging.
template <class W, bool kToPacked>
__global__ void move_warps(std::byte *dense, std::byte *packed, Work w, const std::uint64_t *blocks, std::uint64_t n) {
    for_each_item(w, n, [&](std::uint64_t i, std::uint64_t begin, int lane) {
        const std::uint64_t k = blocks[i];
        const std::uint64_t len = block_len(w.g, k);
        if (begin >= len) return;
        const std::uint64_t end = min(len, begin + kChunkBytes);
        W *d = reinterpret_cast<W *>(dense + k * w.g.block_bytes + begin);
        W *p = reinterpret_cast<W *>(packed + i * w.g.block_bytes + begin);
        const std::uint64_t words = (end - begin) / sizeof(W);
        for (std::uint64_t j = lane; j < words; j += 32) {
            if (kToPacked)
                p[j] = d[j];
            else
                d[j] = p[j];
        }
    });
}

template <class W, bool kToPacked>
__global__ void move_threads(std::byte *dense, std::byte *packed, BlockGeometry g, const std::uint64_t *blocks,
                             std::uint64_t n) {
    for (std::uint64_t i = global_thread(); i < n; i += thread_count()) {
        const std::uint64_t k = blocks[i];
        W *d = reinterpret_cast<W *>(dense + k * g.block_bytes);
        W *p = reinterpret_cast<W *>(packed + i * g.block_bytes);
        const std::uint64_t words = block_len(g, k) / sizeof(W);
        for (std::uint64_t j = 0; j < words; ++j) {
            if (kToPacked)
                p[j] = d[j];
            else
                d[j] = p[j];
        }
    }
}

__device__ inline bool present_bit(const std::uint64_t *present, std::uint64_t k) {
    return (present[k >> 6] >> (k & 63)) & 1u;
}

template <class W>
__global__ void zero_warps(std::byte *out, Work w, const std::uint64_t *present) {
    for_each_item(w, w.g.num_blocks, [&](std::uint64_t k, std::uint64_t begin, int lane) {
        const std::uint64_t len = block_len(w.g, k);
        if (begin >= len || present_bit(present, k)) return;
        const std::uint64_t end = min(len, begin + kChunkBytes);
        W *p = reinterpret_cast<W *>(out + k * w.g.block_bytes + begin);
        const std::uint64_t n = (end - begin) / sizeof(W);
        for (std::uint64_t j = lane; j < n; j += 32)
            p[j] = zero_word<W>();
    });
}

template <class W>
__global__ void zero_threads(std::byte *out, BlockGeometry g, const std::uint64_t *present) {
    for (std::uint64_t k = global_thread(); k < g.num_blocks; k += thread_count()) {
        if (present_bit(present, k)) continue;
        W *p = reinterpret_cast<W *>(out + k * g.block_bytes);
        const std::uint64_t n = block_len(g, k) / sizeof(W);
        for (std::uint64_t j = 0; j < n; ++j)
            p[j] = zero_word<W>();
    }
}

// The widest access every address and length allows.
int word_bytes(const BlockGeometry &g, const void *a, const void *b) {
    const std::uint64_t bits =
        reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) | g.block_bytes | g.total_bytes | 16;
    return static_cast<int>(bits & (~bits + 1));
}

bool small_blocks(const BlockGeometry &g) {
    return g.block_bytes <= kSmallBlockBytes;
}

unsigned grid_for(std::uint64_t threads, int sm_count) {
    const std::uint64_t wanted = (threads + kThreads - 1) / kThreads;
    const std::uint64_t cap = std::uint64_t{static_cast<unsigned>(std::max(sm_count, 1))} * 32;
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(wanted, cap)));
}

Work work_of(const BlockGeometry &g) {
    return Work{g, (g.block_bytes + kChunkBytes - 1) / kChunkBytes};
}

// Calls launch(W{}) with the word type for `bytes`.
template <class Launch>
void with_word(int bytes, Launch launch) {
    switch (bytes) {
    case 16: launch(uint4{}); break;
    case 8: launch(std::uint64_t{}); break;
    case 4: launch(std::uint32_t{}); break;
    case 2: launch(std::uint16_t{}); break;
    default: launch(std::uint8_t{}); break;
    }
}

}  // namespace

cudaError_t launch_scan(const std::byte *data, const BlockGeometry &g, std::uint8_t *flags, std::uint64_t *words,
                        int sm_count, cudaStream_t stream) {
    if (g.num_blocks == 0) return cudaSuccess;
    cudaError_t rc = cudaMemsetAsync(flags, 0, g.num_blocks, stream);
    if (rc != cudaSuccess) return rc;
    const Work w = work_of(g);
    with_word(word_bytes(g, data, data), [&](auto word) {
        using W = decltype(word);
        if (small_blocks(g))
            scan_threads<W><<<grid_for(g.num_blocks, sm_count), kThreads, 0, stream>>>(data, g, flags);
        else
            scan_warps<W><<<grid_for(g.num_blocks * w.chunks * 32, sm_count), kThreads, 0, stream>>>(data, w, flags);
    });
    pack_flags<<<grid_for((g.num_blocks + 63) / 64, sm_count), kThreads, 0, stream>>>(flags, g.num_blocks, words);
    return cudaGetLastError();
}

namespace {

template <bool kToPacked>
cudaError_t launch_move(std::byte *dense, std::byte *packed, const BlockGeometry &g, const std::uint64_t *blocks,
                        std::uint64_t n, int sm_count, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    const Work w = work_of(g);
    with_word(word_bytes(g, dense, packed), [&](auto word) {
        using W = decltype(word);
        if (small_blocks(g))
            move_threads<W, kToPacked><<<grid_for(n, sm_count), kThreads, 0, stream>>>(dense, packed, g, blocks, n);
        else
            move_warps<W, kToPacked>
                <<<grid_for(n * w.chunks * 32, sm_count), kThreads, 0, stream>>>(dense, packed, w, blocks, n);
    });
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gather(const std::byte *data, const BlockGeometry &g, const std::uint64_t *blocks, std::uint64_t n,
                          std::byte *dst, int sm_count, cudaStream_t stream) {
    return launch_move<true>(const_cast<std::byte *>(data), dst, g, blocks, n, sm_count, stream);
}

cudaError_t launch_scatter(std::byte *out, const BlockGeometry &g, const std::byte *src, const std::uint64_t *blocks,
                           std::uint64_t n, int sm_count, cudaStream_t stream) {
    return launch_move<false>(out, const_cast<std::byte *>(src), g, blocks, n, sm_count, stream);
}

cudaError_t launch_zero_absent(std::byte *out, const BlockGeometry &g, const std::uint64_t *present, int sm_count,
                               cudaStream_t stream) {
    if (g.num_blocks == 0) return cudaSuccess;
    const Work w = work_of(g);
    with_word(word_bytes(g, out, out), [&](auto word) {
        using W = decltype(word);
        if (small_blocks(g))
            zero_threads<W><<<grid_for(g.num_blocks, sm_count), kThreads, 0, stream>>>(out, g, present);
        else
            zero_warps<W><<<grid_for(g.num_blocks * w.chunks * 32, sm_count), kThreads, 0, stream>>>(out, w, present);
    });
    return cudaGetLastError();
}

}  // namespace mpix::sparse::detail::cuda
