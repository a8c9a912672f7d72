#include "core/memory_ops.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mpix::sparse::detail {
namespace {

// Copies exactly `bytes` bytes; 4- and 8-byte cases are element-sparse (block size 1) traffic, where
// a call to memcpy per element would dominate.
inline void copy_block(std::byte *dst, const std::byte *src, std::size_t bytes) {
    switch (bytes) {
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    default: std::memcpy(dst, src, bytes); break;
    }
}

}  // namespace

void fill_zero(std::byte *dst, std::size_t n, bool streaming) {
#if defined(__SSE2__)
    if (streaming && n >= 256) {
        // Align to 16 bytes with ordinary stores, stream the middle, finish the tail.
        const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
        std::memset(dst, 0, head);
        dst += head;
        n -= head;
        const __m128i zero = _mm_setzero_si128();
        std::size_t i = 0;
        for (; i + 64 <= n; i += 64) {
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), zero);
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), zero);
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), zero);
            _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), zero);
        }
        std::memset(dst + i, 0, n - i);
        return;
    }
#endif
    (void)streaming;
    std::memset(dst, 0, n);
}

void store_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

void gather_blocks(std::byte *dst, const std::byte *src, const std::uint32_t *index, std::size_t n,
                   std::uint64_t first_block, std::size_t block_bytes, std::size_t last_bytes) {
    if (n == 0) return;
    for (std::size_t i = 0; i + 1 < n; ++i)
        copy_block(dst + i * block_bytes, src + (first_block + index[i]) * block_bytes, block_bytes);
    copy_block(dst + (n - 1) * block_bytes, src + (first_block + index[n - 1]) * block_bytes, last_bytes);
}

namespace {

// One element per block (the element variant): a typed loop, no per-element size dispatch.
template <std::size_t Bytes>
void scatter_elements(std::byte *dst, const std::byte *src, const std::uint32_t *index, std::size_t n,
                      std::uint64_t first) {
    std::byte *base = dst + first * Bytes;
    for (std::size_t i = 0; i < n; ++i)
        std::memcpy(base + std::size_t{index[i]} * Bytes, src + i * Bytes, Bytes);
}

}  // namespace

void scatter_blocks(std::byte *dst, const std::byte *src, const std::uint32_t *index, std::size_t n,
                    std::uint64_t first_block, std::size_t block_bytes, std::size_t last_bytes) {
    if (n == 0) return;
    if (block_bytes == 4 && last_bytes == 4) return scatter_elements<4>(dst, src, index, n, first_block);
    if (block_bytes == 8 && last_bytes == 8) return scatter_elements<8>(dst, src, index, n, first_block);
    for (std::size_t i = 0; i + 1 < n; ++i)
        copy_block(dst + (first_block + index[i]) * block_bytes, src + i * block_bytes, block_bytes);
    copy_block(dst + (first_block + index[n - 1]) * block_bytes, src + (n - 1) * block_bytes, last_bytes);
}

}  // namespace mpix::sparse::detail
