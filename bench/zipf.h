// Zipf(s) distribution over popularity ranks 1..n, P(j) = j^-s / H(n, s): sampling, and the expected
// number of distinct ranks a batch of L lookups touches (to size batches for a target density).
#ifndef MPIX_SPARSE_BENCH_ZIPF_H
#define MPIX_SPARSE_BENCH_ZIPF_H

#include "rng.h"

#include <cstdint>
#include <vector>

namespace bench {

// Draws ranks in O(1) time and memory by rejection-inversion (Hoermann & Derflinger 1996, as in
// Apache Commons Math), since a CDF table for millions of ranks would cost more than the buffers.
class ZipfSampler {
  public:
    ZipfSampler(std::uint64_t n, double s);
    std::uint64_t operator()(Rng &rng) const;  // in [1, n]

  private:
    double h(double x) const;
    double h_integral(double x) const;
    double h_integral_inverse(double x) const;

    std::uint64_t n_;
    double s_;
    double h_integral_x1_;
    double h_integral_n_;
    double threshold_;
};

// Expected distinct ranks E(L) = sum_j 1 - (1 - p_j)^L after L independent lookups. Exact for the
// 4096 most popular ranks; the tail is summed over geometric groups of ranks (width 0.1%) with the
// group's mean probability, which keeps each evaluation at a few thousand terms for any n.
class ZipfDistinctModel {
  public:
    ZipfDistinctModel(std::uint64_t n, double s);

    double probability(std::uint64_t j) const;  // p_j, j in [1, n]
    double expected_distinct(double lookups) const;
    // The batch size L whose E(L) is target (bisection on log L); target must be below n.
    double lookups_for(double target) const;

  private:
    struct Group {
        double count;       // ranks in the group
        double log1m_prob;  // log(1 - p) of the group's mean probability
    };
    double s_;
    double harmonic_ = 0;  // H(n, s)
    std::vector<Group> groups_;
};

}  // namespace bench

#endif
