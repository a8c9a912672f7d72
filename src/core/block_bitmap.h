// One bit per block: set when the block holds a non-zero byte on this rank.
#pragma once

#include <cstdint>
#include <vector>

namespace mpix::sparse::detail {

class BlockBitmap {
  public:
    // Sizes the bitmap for `blocks` bits, all clear. Keeps capacity across calls (no steady-state
    // allocation once the largest size was seen).
    void reset(std::uint64_t blocks);

    std::uint64_t size() const { return blocks_; }
    bool test(std::uint64_t k) const { return (words_[k >> 6] >> (k & 63)) & 1u; }
    void set(std::uint64_t k) { words_[k >> 6] |= std::uint64_t{1} << (k & 63); }

    // First set bit in [from, limit), or limit when there is none.
    std::uint64_t next_set(std::uint64_t from, std::uint64_t limit) const;
    // First clear bit in [from, limit), or limit: the end of the run of set bits starting at from.
    std::uint64_t next_clear(std::uint64_t from, std::uint64_t limit) const;
    // Number of set bits in [from, limit).
    std::uint64_t count(std::uint64_t from, std::uint64_t limit) const;

    std::uint64_t *words() { return words_.data(); }
    const std::uint64_t *words() const { return words_.data(); }

  private:
    std::vector<std::uint64_t> words_;
    std::uint64_t blocks_ = 0;
};

}  // namespace mpix::sparse::detail
