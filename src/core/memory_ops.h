// Bulk memory primitives used on hot paths: zero fill that can bypass the cache, and block gather /
// scatter between a dense vector and a packed list of blocks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpix::sparse::detail {

// Buffers at least this large are zero-filled with streaming stores: their lines would only evict
// useful data (the caller reads the result later, long after it left the cache anyway).
inline constexpr std::size_t kStreamingFillBytes = std::size_t{4} << 20;
// Within such a buffer, blocks and zero stretches at least this long go with streaming stores;
// shorter ones cost more per call than they save. The gaps between union blocks are mostly a few
// blocks long: with ordinary stores each of their lines was read from memory before being zeroed
// (64 MiB at 10% density, 4 ranks: the one-pass output took 8 ms to write instead of 4).
inline constexpr std::size_t kStreamingBlockBytes = 256;

// How far ahead of its reads a streaming loop asks for lines: one core's reads from memory are
// bound by the misses it has in flight, not by the bus (docs/performance.md, "Copies into shared
// memory with streaming stores, and reads asked for ahead").
inline constexpr std::size_t kPrefetchAhead = 4096;
// Asks for the line `ahead` bytes past p. An integer address: it may lie past the buffer, where
// pointer arithmetic may not go, and a prefetch never faults.
inline void prefetch_ahead(const void *p, std::size_t ahead = kPrefetchAhead) {
    __builtin_prefetch(reinterpret_cast<const void *>(reinterpret_cast<std::uintptr_t>(p) + ahead));
}

// One past the last entry of the run of adjacent block numbers that starts at index[i] (ascending
// numbers, n of them): such a run is one copy wherever blocks are packed back to back.
inline std::size_t adjacent_run_end(const std::uint32_t *index, std::size_t i, std::size_t n) {
    std::size_t j = i + 1;
    while (j < n && index[j] == index[j - 1] + 1)
        ++j;
    return j;
}

// Writes n zero bytes at dst. With streaming = true, uses non-temporal stores where the CPU has them;
// call store_fence() before another process may read the memory.
void fill_zero(std::byte *dst, std::size_t n, bool streaming);
void store_fence();

// Copies the blocks listed by `index` (block numbers relative to `first_block`) from the dense vector
// `src` into the packed buffer `dst`, each `block_bytes` long except `last_bytes` for the final one.
// With `streaming` (a packed message another process reads from memory anyway), blocks of at least
// kStreamingBlockBytes go with streaming stores, fenced before it returns.
void gather_blocks(std::byte *dst, const std::byte *src, const std::uint32_t *index, std::size_t n,
                   std::uint64_t first_block, std::size_t block_bytes, std::size_t last_bytes, bool streaming = false);
// The inverse of gather_blocks. With `streaming`, blocks of at least kStreamingBlockBytes go with
// streaming stores (see fill_zero).
void scatter_blocks(std::byte *dst, const std::byte *src, const std::uint32_t *index, std::size_t n,
                    std::uint64_t first_block, std::size_t block_bytes, std::size_t last_bytes, bool streaming = false);

// Writes the bytes [begin, end) of the dense vector `dst` completely, in one pass: the n blocks of
// the packed `src` at byte offsets begin + index[i] * block_bytes (ascending, each cut at `end`), and
// zeros everywhere else. With `streaming` (outputs too large to stay cached), 4- and 8-byte blocks
// are assembled in cache tiles that go out with streaming stores, and long zero stretches too, so
// no output line is read: cheaper than zero-filling first and scattering after, which reads each
// line that receives a value back from memory.
void write_covered(std::byte *dst, std::size_t begin, std::size_t end, const std::byte *src, const std::uint32_t *index,
                   std::size_t n, std::size_t block_bytes, bool streaming);

// Copies n bytes, with streaming stores when `streaming` (see fill_zero).
void copy_bytes(std::byte *dst, const std::byte *src, std::size_t n, bool streaming);

}  // namespace mpix::sparse::detail
