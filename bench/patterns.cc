#include "patterns.h"

#include "random_permutation.h"
#include "rng.h"
#include "zipf.h"

#include <algorithm>
#include <cmath>

namespace bench {

namespace {

// Tags that keep the random streams of different purposes apart.
enum : std::uint64_t { kTagRandom = 1, kTagShared = 2, kTagClustered = 3, kTagZipf = 4 };

std::vector<std::int64_t> collect(const std::vector<std::uint8_t> &mask) {
    std::vector<std::int64_t> units;
    for (std::size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) units.push_back(static_cast<std::int64_t>(i));
    return units;
}

// Marks a uniformly random k-subset of [0, n) by Floyd's algorithm: O(k) draws (or O(n - k), by
// choosing the complement, when k is more than half of n).
std::vector<std::uint8_t> random_subset_mask(std::int64_t n, std::int64_t k, Rng &rng) {
    const bool complement = 2 * k > n;
    const std::int64_t m = complement ? n - k : k;
    std::vector<std::uint8_t> chosen(static_cast<std::size_t>(n), 0);
    for (std::int64_t j = n - m; j < n; ++j) {
        const std::size_t t = rng.below(static_cast<std::uint64_t>(j) + 1);
        chosen[chosen[t] ? static_cast<std::size_t>(j) : t] = 1;
    }
    if (complement)
        for (std::uint8_t &c : chosen)
            c ^= 1;
    return chosen;
}

// Ranks take k consecutive positions of one shared permutation: slices n/P apart when k*P <= n
// (disjoint); otherwise consecutive ranks' windows abut cyclically, which spreads the unavoidable
// overlap evenly (each unit is covered floor or ceil(k*P/n) times).
std::vector<std::int64_t> disjoint_units(const PatternSpec &spec, std::int64_t n, std::int64_t k) {
    const RandomPermutation perm(static_cast<std::uint64_t>(n),
                                 derive_seed({spec.seed, kTagShared, static_cast<std::uint64_t>(n)}));
    const auto p = static_cast<std::uint64_t>(spec.nranks);
    const auto un = static_cast<std::uint64_t>(n), uk = static_cast<std::uint64_t>(k);
    const std::uint64_t stride = uk * p <= un ? un / p : uk;
    const std::uint64_t start = static_cast<std::uint64_t>(spec.rank) * stride;
    std::vector<std::uint8_t> chosen(static_cast<std::size_t>(n), 0);
    for (std::uint64_t j = 0; j < uk; ++j)
        chosen[perm((start + j) % un)] = 1;
    return collect(chosen);
}

// ceil(k/32) non-overlapping runs (the last one shorter when 32 does not divide k), placed uniformly
// by stars and bars: the m run starts, less the units before them, are a random m-subset of the
// n - k + m slots left when each run is shrunk to one unit. Runs may abut.
std::vector<std::int64_t> clustered_units(const PatternSpec &spec, std::int64_t n, std::int64_t k) {
    Rng rng(derive_seed({spec.seed, kTagClustered, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(k),
                         static_cast<std::uint64_t>(spec.rank)}));
    const std::int64_t runs = (k + kClusterRun - 1) / kClusterRun;
    const std::vector<std::int64_t> slots = collect(random_subset_mask(n - k + runs, runs, rng));
    std::vector<std::int64_t> units;
    units.reserve(static_cast<std::size_t>(k));
    std::int64_t before = 0;  // units in earlier runs
    for (std::int64_t i = 0; i < runs; ++i) {
        const std::int64_t length = std::min(kClusterRun, k - before);
        const std::int64_t start = slots[static_cast<std::size_t>(i)] - i + before;
        for (std::int64_t u = start; u < start + length; ++u)
            units.push_back(u);
        before += length;
    }
    return units;
}

// Embedding-gradient model: unit = row of an embedding table, popularity rank j (1 = hottest) maps
// to row perm(j - 1) through a permutation shared by all ranks, so hot rows coincide across ranks.
// Each rank looks up L rows i.i.d. from Zipf(s) over ranks, L chosen so the expected number of
// distinct rows is k.
std::vector<std::int64_t> zipf_units(const PatternSpec &spec, std::int64_t n, std::int64_t k, ZipfBatch *batch) {
    const auto un = static_cast<std::uint64_t>(n);
    std::vector<std::uint8_t> touched(static_cast<std::size_t>(n), 0);
    if (k >= n) {  // only an infinite batch is sure to touch every row
        std::fill(touched.begin(), touched.end(), 1);
        if (batch) *batch = {INFINITY, false};
        return collect(touched);
    }
    const RandomPermutation row_of_rank(un, derive_seed({spec.seed, kTagShared, un}));
    Rng rng(
        derive_seed({spec.seed, kTagZipf, un, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(spec.rank)}));
    const ZipfDistinctModel model(un, spec.zipf_s);
    const double lookups = std::round(model.lookups_for(static_cast<double>(k)));
    const bool drawn = lookups <= kZipfMaxDrawnLookups;
    if (drawn) {
        const ZipfSampler sampler(un, spec.zipf_s);
        for (double i = 0; i < lookups; ++i)
            touched[row_of_rank(sampler(rng) - 1)] = 1;
    } else {
        // Row j is in a batch of L lookups with probability 1 - (1 - p_j)^L; drawing each row with
        // that probability gives the same per-row marginals in O(n) instead of O(L).
        for (std::uint64_t j = 1; j <= un; ++j) {
            const double q = -std::expm1(lookups * std::log1p(-model.probability(j)));
            if (rng.uniform() < q) touched[row_of_rank(j - 1)] = 1;
        }
    }
    if (batch) *batch = {lookups, drawn};
    return collect(touched);
}

}  // namespace

const char *pattern_name(Pattern p) {
    switch (p) {
    case Pattern::Random: return "random";
    case Pattern::Identical: return "identical";
    case Pattern::Disjoint: return "disjoint";
    case Pattern::Clustered: return "clustered";
    case Pattern::Zipf: return "zipf";
    }
    return "?";
}

bool parse_pattern(const std::string &s, Pattern &out) {
    for (Pattern p : {Pattern::Random, Pattern::Identical, Pattern::Disjoint, Pattern::Clustered, Pattern::Zipf}) {
        if (s == pattern_name(p)) {
            out = p;
            return true;
        }
    }
    return false;
}

std::int64_t target_nonzero(std::int64_t n, double density) {
    if (density <= 0 || n <= 0) return 0;
    return std::clamp<std::int64_t>(std::llround(density * static_cast<double>(n)), 1, n);
}

std::vector<std::int64_t> choose_nonzero_units(const PatternSpec &spec, std::int64_t n, double density,
                                               ZipfBatch *zipf) {
    const std::int64_t k = target_nonzero(n, density);
    if (zipf) *zipf = {};
    if (k == 0) return {};
    const auto un = static_cast<std::uint64_t>(n), uk = static_cast<std::uint64_t>(k);
    switch (spec.pattern) {
    case Pattern::Random: {
        Rng rng(derive_seed({spec.seed, kTagRandom, un, uk, static_cast<std::uint64_t>(spec.rank)}));
        return collect(random_subset_mask(n, k, rng));
    }
    case Pattern::Identical: {
        Rng rng(derive_seed({spec.seed, kTagRandom, un, uk}));
        return collect(random_subset_mask(n, k, rng));
    }
    case Pattern::Disjoint: return disjoint_units(spec, n, k);
    case Pattern::Clustered: return clustered_units(spec, n, k);
    case Pattern::Zipf: return zipf_units(spec, n, k, zipf);
    }
    return {};
}

}  // namespace bench
