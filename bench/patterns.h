// Which units (blocks of the dense buffer, or elements in the element variant) are non-zero on each
// rank. The definitions are documented in bench/README.md; keep the two in step.
#ifndef MPIX_SPARSE_BENCH_PATTERNS_H
#define MPIX_SPARSE_BENCH_PATTERNS_H

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

enum class Pattern { Random, Identical, Disjoint, Clustered, Zipf };

const char *pattern_name(Pattern p);
bool parse_pattern(const std::string &s, Pattern &out);

// Length of the runs of consecutive non-zero units in the clustered pattern.
constexpr std::int64_t kClusterRun = 32;
// Batches up to this many Zipf lookups are drawn one by one; larger ones use the equivalent
// per-row inclusion probabilities, so input generation stays under a second.
constexpr double kZipfMaxDrawnLookups = 1 << 24;

struct PatternSpec {
    Pattern pattern = Pattern::Random;
    std::uint64_t seed = 1;
    double zipf_s = 1.05;
    int rank = 0;
    int nranks = 1;
};

// Non-zero units per rank at this density: none at 0, else round(density * n) clamped to [1, n].
std::int64_t target_nonzero(std::int64_t n, double density);

// What a zipf draw did, for the JSON metadata.
struct ZipfBatch {
    double lookups = 0;  // L
    bool drawn = false;  // L lookups drawn one by one (else per-row inclusion probabilities)
};

// The sorted, distinct units in [0, n) that are non-zero on spec.rank. Exactly target_nonzero(n,
// density) of them, except for zipf, whose batch size is chosen so the expected count is that.
std::vector<std::int64_t> choose_nonzero_units(const PatternSpec &spec, std::int64_t n, double density,
                                               ZipfBatch *zipf = nullptr);

}  // namespace bench

#endif
