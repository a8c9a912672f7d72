// Small, fast, fully specified random numbers: inputs must be reproducible from --seed on any
// standard library, which std::uniform_*_distribution does not guarantee.
#ifndef MPIX_SPARSE_BENCH_RNG_H
#define MPIX_SPARSE_BENCH_RNG_H

#include <cstdint>
#include <initializer_list>

namespace bench {

// SplitMix64 finalizer: a strong 64-bit mixing function (Steele, Lea, Flood 2014).
inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Derives independent seeds from the user seed and a context (pattern, size, rank, ...).
inline std::uint64_t derive_seed(std::initializer_list<std::uint64_t> parts) {
    std::uint64_t h = 0x6a09e667f3bcc909ULL;
    for (std::uint64_t p : parts)
        h = mix64(h ^ mix64(p));
    return h;
}

// SplitMix64 generator.
class Rng {
  public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ULL;
        std::uint64_t x = state_;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    }

    // Uniform in [0, n), n > 0. Modulo bias is n / 2^64, far below anything a benchmark sees.
    std::uint64_t below(std::uint64_t n) { return next() % n; }

    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  private:
    std::uint64_t state_;
};

}  // namespace bench

#endif
