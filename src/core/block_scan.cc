#include "core/block_scan.h"

#include <cstring>

#include "core/memory_ops.h"

namespace mpix::sparse::detail {
namespace {

// The scan asks for lines kPrefetchAhead bytes ahead (core/memory_ops.h). 64 MiB, two processes at
// once (a throwaway loop, 2026-12-02): 1% 6.0-6.3 -> 4.8-5.2 ms, 10% 7.0-7.2 -> 6.2-6.3, 50%
// 6.2-6.4 -> 5.5-5.6, 100% (one line a block) 1.2-1.3 -> 0.7-0.8.

// Whether any byte of [p, p + n) is non-zero, n a multiple of 64, read in full: no branch depends
// on the data, so loads run ahead across blocks. Two vector accumulators (GCC's vector extension:
// AVX2 in the avx2 clone, SSE2 otherwise) take the lines, and only the block's end reduces them to
// a word: reducing each line to a word, as this did, cost more than the loads. One line is asked
// for 4 KiB ahead per 1 KiB of input, not per line. 64 MiB, two processes at once on a Zen 5 guest
// (docs/results/zen5_machine/scan_lanes/scanv.cc): 1% 2.79 -> 2.10 ms (the early exit before),
// 10% 2.83 -> 1.64 (the same), 50% 2.70 -> 1.87 (a word per line, a prefetch per line).
using ScanLanes = std::uint64_t __attribute__((vector_size(32)));

inline bool any_nonzero(const std::byte *p, std::size_t n) {
    ScanLanes a{}, b{};
    for (std::size_t i = 0; i < n; i += 64) {
        if ((reinterpret_cast<std::uintptr_t>(p + i) & 1023) < 64) prefetch_ahead(p + i);  // whatever the alignment
        ScanLanes x, y;
        std::memcpy(&x, p + i, sizeof x);
        std::memcpy(&y, p + i + 32, sizeof y);
        a |= x;
        b |= y;
    }
    a |= b;
    return ((a[0] | a[1]) | (a[2] | a[3])) != 0;
}

// One line, for the early exit: a line is eight words the compiler turns into vector ORs.
inline bool line_is_zero(const std::byte *p) {
    prefetch_ahead(p);
    std::uint64_t w[8];
    std::memcpy(w, p, sizeof w);
    return (((w[0] | w[1]) | (w[2] | w[3])) | ((w[4] | w[5]) | (w[6] | w[7]))) == 0;
}

// bytes_are_zero_inline tests one line per step and stops at the first non-zero one, so dense blocks
// cost one line each.
inline bool bytes_are_zero_inline(const std::byte *p, std::size_t n) {
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64)
        if (!line_is_zero(p + i)) return false;
    std::uint64_t acc = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        acc |= w;
    }
    for (; i < n; ++i)
        acc |= static_cast<std::uint64_t>(p[i]);
    return acc == 0;
}

// Whether a word of 64 blocks is read whole, without branches on the data, rather than a line at a
// time up to each block's first non-zero line. Where zero and non-zero blocks mix unpredictably,
// that early exit mispredicts about once a block and each misprediction waits for a load from
// memory: 64 MiB at 50% random took 10 ms to scan against 7 with every line read (one process).
// Where nearly every block is non-zero, the early exit reads one line of each. Where nearly none
// is, reading whole blocks costs a few more lines of the non-zero ones (which the staging or the
// send reads next anyway) and saves a test per line. Decided by the previous word.
inline bool read_whole(std::uint64_t previous_bits) {
    return __builtin_popcountll(previous_bits) < 44;
}

}  // namespace

bool bytes_are_zero(const std::byte *p, std::size_t n) {
    return bytes_are_zero_inline(p, n);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
std::uint64_t
scan_blocks(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap, SendStaging *staging) {
    const std::uint64_t blocks = layout.num_blocks();
    const std::size_t block_bytes = layout.block_bytes();
    std::uint64_t nonzero = 0;
    std::uint64_t *words = bitmap.words();
    // Words of 64 whole blocks of whole lines may take the branch-free scan.
    const bool lines = block_bytes % 64 == 0 && block_bytes > 0 && blocks > 0;
    const std::uint64_t whole_words =
        lines ? (layout.bytes_of(blocks - 1) == block_bytes ? blocks : blocks - 1) / 64 : 0;
    std::uint64_t previous = 0;
    for (std::uint64_t word = 0; word * 64 < blocks; ++word) {
        const bool stage = staging != nullptr && staging->stages(word, previous);
        std::uint64_t bits = 0;
        if (word < whole_words && read_whole(previous)) {
            const std::byte *base = data + static_cast<std::size_t>(word * 64) * block_bytes;
            for (unsigned j = 0; j < 64; ++j)
                bits |= std::uint64_t{any_nonzero(base + j * block_bytes, block_bytes)} << j;
        } else {
            const std::uint64_t end = (word + 1) * 64 < blocks ? (word + 1) * 64 : blocks;
            for (std::uint64_t k = word * 64; k < end; ++k)
                if (!bytes_are_zero_inline(data + static_cast<std::size_t>(k) * block_bytes, layout.bytes_of(k)))
                    bits |= std::uint64_t{1} << (k & 63);
        }
        words[word] = bits;
        nonzero += static_cast<std::uint64_t>(__builtin_popcountll(bits));
        previous = bits;
        // Copied while the word's lines are cached: staged words follow a word of fewer than 44
        // non-zero blocks (SendStaging::stages), as whole-read ones do, so they were just read whole
        // (but for a last word of a partial block or fewer than 64, read up to its first non-zero
        // lines; the copy reads the rest, once, as the send from the input would have).
        if (stage)
            staging->stage_word(word, data, bits);
        else if (staging != nullptr)
            staging->skip_word(word);
    }
    if (staging != nullptr) store_fence();  // staged blocks visible before a reference to them travels
    return nonzero;
}

}  // namespace mpix::sparse::detail
