#include "core/block_scan.h"

#include <cstring>

#include "core/memory_ops.h"

namespace mpix::sparse::detail {
namespace {

// The scan asks for lines kPrefetchAhead bytes ahead (core/memory_ops.h). 64 MiB, two processes at
// once (a throwaway loop): 1% 6.0-6.3 -> 4.8-5.2 ms, 10% 7.0-7.2 -> 6.2-6.3, 50% 6.2-6.4 -> 5.5-5.6,
// 100% (one line a block) 1.2-1.3 -> 0.7-0.8.

// The OR of every line of [p, p + n), n a multiple of 64: a line is eight words the compiler turns
// into vector ORs. No early exit: no branch depends on the data, so loads run ahead across blocks.
inline std::uint64_t or_of_lines(const std::byte *p, std::size_t n) {
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < n; i += 64) {
        prefetch_ahead(p + i);
        std::uint64_t w[8];
        std::memcpy(w, p + i, sizeof w);
        acc |= ((w[0] | w[1]) | (w[2] | w[3])) | ((w[4] | w[5]) | (w[6] | w[7]));
    }
    return acc;
}

// bytes_are_zero_inline tests one line per step and stops at the first non-zero one, so dense blocks
// cost one line each.
inline bool line_is_zero(const std::byte *p) {
    return or_of_lines(p, 64) == 0;
}

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

// Whether a word of 64 blocks is scanned without branches on the data. Where zero and non-zero
// blocks mix unpredictably, the early exit of a non-zero block mispredicts about once a block and
// each misprediction waits for a load from memory: 64 MiB at 50% random took 10 ms to scan against
// 7 with every line read (one process). Where nearly every block is non-zero, the early exit reads
// one line of each, and where nearly none is, it predicts well. Decided by the previous word.
inline bool mixed(std::uint64_t previous_bits) {
    const int n = __builtin_popcountll(previous_bits);
    return n > 8 && n < 44;
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
        if (word < whole_words && mixed(previous)) {
            const std::byte *base = data + static_cast<std::size_t>(word * 64) * block_bytes;
            for (unsigned j = 0; j < 64; ++j)
                bits |= std::uint64_t{or_of_lines(base + j * block_bytes, block_bytes) != 0} << j;
        } else {
            const std::uint64_t end = (word + 1) * 64 < blocks ? (word + 1) * 64 : blocks;
            for (std::uint64_t k = word * 64; k < end; ++k)
                if (!bytes_are_zero_inline(data + static_cast<std::size_t>(k) * block_bytes, layout.bytes_of(k)))
                    bits |= std::uint64_t{1} << (k & 63);
        }
        words[word] = bits;
        nonzero += static_cast<std::uint64_t>(__builtin_popcountll(bits));
        previous = bits;
        // Copied while the word's lines are cached: a mixed word's blocks were read whole; a sparse
        // word's only up to their first non-zero byte, so the copy reads the rest, once, as the send
        // from the input would have.
        if (stage)
            staging->stage_word(word, data, bits);
        else if (staging != nullptr)
            staging->skip_word(word);
    }
    if (staging != nullptr) store_fence();  // staged blocks visible before a reference to them travels
    return nonzero;
}

}  // namespace mpix::sparse::detail
