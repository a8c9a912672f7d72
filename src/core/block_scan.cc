#include "core/block_scan.h"

#include <cstring>

#include "core/memory_ops.h"

namespace mpix::sparse::detail {
namespace {

// 64 bytes (one cache line) per step, OR-reduced in eight words the compiler turns into vector ORs;
// a non-zero line ends the test early, so dense blocks cost one line each.
inline bool line_is_zero(const std::byte *p) {
    std::uint64_t w[8];
    std::memcpy(w, p, sizeof w);
    return ((w[0] | w[1]) | (w[2] | w[3]) | (w[4] | w[5]) | (w[6] | w[7])) == 0;
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

}  // namespace

bool bytes_are_zero(const std::byte *p, std::size_t n) {
    return bytes_are_zero_inline(p, n);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
std::uint64_t
scan_blocks(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap, std::byte *zero_fill) {
    const std::uint64_t blocks = layout.num_blocks();
    const std::size_t block_bytes = layout.block_bytes();
    const bool streaming = layout.total_bytes() >= kStreamingFillBytes;
    std::uint64_t nonzero = 0;
    std::uint64_t *words = bitmap.words();
    for (std::uint64_t word = 0; word * 64 < blocks; ++word) {
        std::uint64_t bits = 0;
        const std::uint64_t end = (word + 1) * 64 < blocks ? (word + 1) * 64 : blocks;
        for (std::uint64_t k = word * 64; k < end; ++k) {
            const std::size_t offset = static_cast<std::size_t>(k) * block_bytes;
            const std::size_t bytes = layout.bytes_of(k);
            if (!bytes_are_zero_inline(data + offset, bytes)) {
                bits |= std::uint64_t{1} << (k & 63);
            } else if (zero_fill != nullptr) {
                fill_zero(zero_fill + offset, bytes, streaming);
            }
        }
        words[word] = bits;
        nonzero += static_cast<std::uint64_t>(__builtin_popcountll(bits));
    }
    if (zero_fill != nullptr && streaming) store_fence();
    return nonzero;
}

}  // namespace mpix::sparse::detail
