// The device side of the memory-kind boundary: kernels over a vector cut into blocks (same layout and
// zero rule as the host: a block is zero when all of its bytes are). Each launcher enqueues on
// `stream` and returns the launch error; the caller synchronizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mpix::sparse::detail::cuda {

struct BlockGeometry {
    std::uint64_t num_blocks = 0;
    std::uint64_t block_bytes = 0;
    std::uint64_t total_bytes = 0;
};

// flags[k] = 1 for every block k with a non-zero byte (flags zeroed first by the launcher), then
// words[] = the same as a bitmap of 64-bit words (bit k of word k / 64).
cudaError_t launch_scan(const std::byte *data, const BlockGeometry &g, std::uint8_t *flags, std::uint64_t *words,
                        int sm_count, cudaStream_t stream);
// Block blocks[i] of `data` to dst + i * block_bytes, for i < n.
cudaError_t launch_gather(const std::byte *data, const BlockGeometry &g, const std::uint64_t *blocks, std::uint64_t n,
                          std::byte *dst, int sm_count, cudaStream_t stream);
// src + i * block_bytes to block blocks[i] of `out`, for i < n.
cudaError_t launch_scatter(std::byte *out, const BlockGeometry &g, const std::byte *src, const std::uint64_t *blocks,
                           std::uint64_t n, int sm_count, cudaStream_t stream);
// Zeros into every block of `out` whose bit in `present` is clear.
cudaError_t launch_zero_absent(std::byte *out, const BlockGeometry &g, const std::uint64_t *present, int sm_count,
                               cudaStream_t stream);

}  // namespace mpix::sparse::detail::cuda
