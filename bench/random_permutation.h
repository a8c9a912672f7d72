// A seeded random permutation of [0, n) evaluated point by point in O(1) memory, so that all ranks
// can share one permutation of millions of elements without materializing it.
#ifndef MPIX_SPARSE_BENCH_RANDOM_PERMUTATION_H
#define MPIX_SPARSE_BENCH_RANDOM_PERMUTATION_H

#include "rng.h"

#include <cstdint>

namespace bench {

// Balanced 4-round Feistel network over the smallest domain of 2*h bits that holds n, with cycle
// walking to stay inside [0, n) (Black & Rogaway 2002). The domain is below 4n, so a lookup takes
// under 4 network passes on average.
class RandomPermutation {
  public:
    RandomPermutation(std::uint64_t n, std::uint64_t seed) : n_(n) {
        while ((std::uint64_t{1} << (2 * half_bits_)) < n)
            ++half_bits_;
        mask_ = (std::uint64_t{1} << half_bits_) - 1;
        Rng rng(seed);
        for (std::uint64_t &k : keys_)
            k = rng.next();
    }

    // The image of i, for i < n.
    std::uint64_t operator()(std::uint64_t i) const {
        std::uint64_t x = i;
        do {
            x = encrypt(x);
        } while (x >= n_);
        return x;
    }

  private:
    std::uint64_t encrypt(std::uint64_t x) const {
        std::uint64_t left = x >> half_bits_, right = x & mask_;
        for (std::uint64_t key : keys_) {
            const std::uint64_t f = mix64(right ^ key) & mask_;
            const std::uint64_t next_right = left ^ f;
            left = right;
            right = next_right;
        }
        return (left << half_bits_) | right;
    }

    std::uint64_t n_;
    unsigned half_bits_ = 1;
    std::uint64_t mask_ = 0;
    std::uint64_t keys_[4] = {};
};

}  // namespace bench

#endif
