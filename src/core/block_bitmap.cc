#include "core/block_bitmap.h"

#include <algorithm>

namespace mpix::sparse::detail {
namespace {

// Finds the first bit in [from, limit) whose value, after XOR with `flip`, is set.
std::uint64_t next_bit(const std::uint64_t *words, std::uint64_t from, std::uint64_t limit, std::uint64_t flip) {
    if (from >= limit) return limit;
    std::uint64_t w = from >> 6;
    std::uint64_t bits = (words[w] ^ flip) & (~std::uint64_t{0} << (from & 63));
    const std::uint64_t last_word = (limit - 1) >> 6;
    while (bits == 0) {
        if (++w > last_word) return limit;
        bits = words[w] ^ flip;
    }
    const std::uint64_t found = (w << 6) + static_cast<std::uint64_t>(__builtin_ctzll(bits));
    return std::min(found, limit);
}

}  // namespace

void BlockBitmap::reset(std::uint64_t blocks) {
    blocks_ = blocks;
    words_.assign((blocks + 63) / 64, 0);
}

std::uint64_t BlockBitmap::next_set(std::uint64_t from, std::uint64_t limit) const {
    return next_bit(words_.data(), from, limit, 0);
}

std::uint64_t BlockBitmap::next_clear(std::uint64_t from, std::uint64_t limit) const {
    return next_bit(words_.data(), from, limit, ~std::uint64_t{0});
}

std::uint64_t BlockBitmap::count(std::uint64_t from, std::uint64_t limit) const {
    std::uint64_t n = 0;
    while (from < limit) {
        const std::uint64_t w = from >> 6;
        const std::uint64_t lo = from & 63;
        const std::uint64_t span = std::min<std::uint64_t>(64 - lo, limit - from);
        std::uint64_t bits = words_[w] >> lo;
        if (span < 64) bits &= (std::uint64_t{1} << span) - 1;
        n += static_cast<std::uint64_t>(__builtin_popcountll(bits));
        from += span;
    }
    return n;
}

}  // namespace mpix::sparse::detail
