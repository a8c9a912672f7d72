#include "core/memory_ops.h"

#include <algorithm>
#include <cstring>

#include "core/line_streams.h"

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

// Bytes from dst to the next 64-byte line boundary.
// (fill_zero and copy_bytes call no libc function for zero bytes: glibc's AVX-512 memset and memcpy
// store with an empty mask even then, and where the result sink called them for every 1 KiB block
// (an aligned block has no partial line) the calls took 10% of the cycles at 50% density.)
inline std::size_t line_head(const std::byte *dst) {
    return (64 - (reinterpret_cast<std::uintptr_t>(dst) & 63)) & 63;
}

}  // namespace

void fill_zero(std::byte *dst, std::size_t n, bool streaming) {
#if defined(__SSE2__)
    if (streaming && n >= 256) {
        // Ordinary stores up to a line boundary, streaming stores for whole lines, ordinary ones for
        // the tail: a line only partly written by streaming stores goes to memory as a partial write.
        const std::size_t head = line_head(dst);
        if (head != 0) std::memset(dst, 0, head);
        dst += head;
        n -= head;
        const std::size_t lines = n & ~std::size_t{63};
        line_streams().zero(dst, lines);
        if (lines < n) std::memset(dst + lines, 0, n - lines);
        return;
    }
#endif
    (void)streaming;
    if (n != 0) std::memset(dst, 0, n);
}

void copy_bytes(std::byte *dst, const std::byte *src, std::size_t n, bool streaming) {
    if (n == 0) return;  // src may be null then (an empty vector's data())
#if defined(__SSE2__)
    if (streaming && n >= 256) {
        const std::size_t head = line_head(dst);  // whole lines only, as in fill_zero
        if (head != 0) std::memcpy(dst, src, head);
        dst += head;
        src += head;
        n -= head;
        const std::size_t lines = n & ~std::size_t{63};
        line_streams().copy(dst, src, lines);
        if (lines < n) std::memcpy(dst + lines, src + lines, n - lines);
        return;
    }
#endif
    (void)streaming;
    std::memcpy(dst, src, n);
}

void store_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

void gather_blocks(std::byte *dst, const std::byte *src, const std::uint32_t *index, std::size_t n,
                   std::uint64_t first_block, std::size_t block_bytes, std::size_t last_bytes, bool streaming) {
    if (n == 0) return;
    streaming = streaming && block_bytes >= kStreamingBlockBytes;
    // The listed blocks are scattered, so the hardware's prefetcher does not see them coming: each
    // line of a block kPrefetchAhead bytes of packed data ahead is asked for before it is copied.
    const std::size_t ahead = block_bytes >= 64 ? std::max<std::size_t>(1, kPrefetchAhead / block_bytes) : n;
    for (std::size_t i = 0; i + 1 < n; ++i) {
        if (i + ahead < n) {
            const std::byte *next = src + (first_block + index[i + ahead]) * block_bytes;
            for (std::size_t line = 0; line < block_bytes; line += 64)
                prefetch_ahead(next + line, 0);
        }
        if (streaming)
            copy_bytes(dst + i * block_bytes, src + (first_block + index[i]) * block_bytes, block_bytes, true);
        else
            copy_block(dst + i * block_bytes, src + (first_block + index[i]) * block_bytes, block_bytes);
    }
    copy_block(dst + (n - 1) * block_bytes, src + (first_block + index[n - 1]) * block_bytes, last_bytes);
    if (streaming) store_fence();
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
                    std::uint64_t first_block, std::size_t block_bytes, std::size_t last_bytes, bool streaming) {
    if (n == 0) return;
    if (block_bytes == 4 && last_bytes == 4) return scatter_elements<4>(dst, src, index, n, first_block);
    if (block_bytes == 8 && last_bytes == 8) return scatter_elements<8>(dst, src, index, n, first_block);
    // Whole blocks go to memory without each output line being read first when streaming; a run of
    // adjacent blocks is one copy (they are adjacent in the packed data as well).
    streaming = streaming && block_bytes >= kStreamingBlockBytes;
    for (std::size_t i = 0; i < n;) {
        const std::size_t j = adjacent_run_end(index, i, n);
        const std::size_t bytes = (j - i - 1) * block_bytes + (j < n ? block_bytes : last_bytes);
        copy_bytes(dst + (first_block + index[i]) * block_bytes, src + i * block_bytes, bytes, streaming);
        i = j;
    }
}

namespace {

void write_zero_stretch(std::byte *dst, std::size_t n, bool streaming) {
    fill_zero(dst, n, streaming && n >= kStreamingBlockBytes);
}

// 4- and 8-byte blocks (one element, or two 4-byte ones): the output is built a 4 KiB tile at a time
// in the cache (zeros, then the tile's blocks), and each whole tile goes out with streaming stores.
// Tiles without blocks are zero-filled directly, a whole empty stretch at once. The tile is zeroed
// once; after each use only the slots that received blocks are cleared again.
template <std::size_t Bytes>
void write_covered_elements(std::byte *dst, std::size_t begin, std::size_t end, const std::byte *src,
                            const std::uint32_t *index, std::size_t n, bool streaming) {
    constexpr std::size_t kTile = 4096;
    alignas(64) std::byte tile[kTile] = {};
    const auto address = reinterpret_cast<std::uintptr_t>(dst);
    std::size_t at = begin;
    std::size_t j = 0;
    while (at < end) {
        if (j == n) {
            write_zero_stretch(dst + at, end - at, streaming);
            return;
        }
        const std::size_t next = begin + std::size_t{index[j]} * Bytes;
        // The tile holding the next element starts at the 4 KiB address boundary at or below it.
        const std::uintptr_t boundary = (address + next) & ~std::uintptr_t{kTile - 1};
        const std::size_t tile_start = boundary > address + at ? boundary - address : at;
        if (tile_start > at) {
            write_zero_stretch(dst + at, tile_start - at, streaming);
            at = tile_start;
        }
        const std::size_t stop = std::min(end, at + (kTile - (address + at) % kTile));
        const std::size_t len = stop - at;
        const std::size_t first = j;
        for (; j < n; ++j) {
            const std::size_t offset = begin + std::size_t{index[j]} * Bytes;
            if (offset >= stop) break;
            std::memcpy(tile + (offset - at), src + j * Bytes, Bytes);
        }
        copy_bytes(dst + at, tile, len, streaming && len == kTile);
        for (std::size_t i = first; i < j; ++i)
            std::memset(tile + (begin + std::size_t{index[i]} * Bytes - at), 0, Bytes);
        at = stop;
    }
}

}  // namespace

void write_covered(std::byte *dst, std::size_t begin, std::size_t end, const std::byte *src, const std::uint32_t *index,
                   std::size_t n, std::size_t block_bytes, bool streaming) {
    // The tiled path needs whole blocks (no partial final block) at addresses aligned to their size,
    // so that no block straddles a tile boundary.
    const bool whole_aligned_blocks =
        (reinterpret_cast<std::uintptr_t>(dst) + begin) % block_bytes == 0 && (end - begin) % block_bytes == 0;
    if (block_bytes == 4 && whole_aligned_blocks)
        return write_covered_elements<4>(dst, begin, end, src, index, n, streaming);
    if (block_bytes == 8 && whole_aligned_blocks)
        return write_covered_elements<8>(dst, begin, end, src, index, n, streaming);
    std::size_t at = begin;
    // A run of adjacent blocks is one copy (they are adjacent in the packed data as well).
    for (std::size_t i = 0; i < n;) {
        const std::size_t j = adjacent_run_end(index, i, n);
        const std::size_t offset = begin + std::size_t{index[i]} * block_bytes;
        write_zero_stretch(dst + at, offset - at, streaming);
        const std::size_t bytes = std::min((j - i) * block_bytes, end - offset);
        copy_bytes(dst + offset, src + i * block_bytes, bytes, streaming && bytes >= kStreamingBlockBytes);
        at = offset + bytes;
        i = j;
    }
    write_zero_stretch(dst + at, end - at, streaming);
}

}  // namespace mpix::sparse::detail
