#include "zipf.h"

#include <algorithm>
#include <cmath>

namespace bench {

namespace {

// log1p(x)/x and expm1(x)/x, continuous at 0 (needed when s is close to 1).
double log1p_over_x(double x) {
    return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double expm1_over_x(double x) {
    return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

// Integral of x^-s over [lo, hi].
double power_integral(double lo, double hi, double s) {
    if (std::fabs(1.0 - s) < 1e-12) return std::log(hi / lo);
    return (std::pow(hi, 1.0 - s) - std::pow(lo, 1.0 - s)) / (1.0 - s);
}

}  // namespace

ZipfSampler::ZipfSampler(std::uint64_t n, double s) : n_(n), s_(s) {
    h_integral_x1_ = h_integral(1.5) - 1.0;
    h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
    threshold_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const {
    return std::exp(-s_ * std::log(x));
}

double ZipfSampler::h_integral(double x) const {
    const double log_x = std::log(x);
    return expm1_over_x((1.0 - s_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // only reachable through rounding
    return std::exp(log1p_over_x(t) * x);
}

std::uint64_t ZipfSampler::operator()(Rng &rng) const {
    for (;;) {
        const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
        const double x = h_integral_inverse(u);
        double k = std::floor(x + 0.5);
        k = std::clamp(k, 1.0, static_cast<double>(n_));
        if (k - x <= threshold_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k);
    }
}

ZipfDistinctModel::ZipfDistinctModel(std::uint64_t n, double s) : s_(s) {
    constexpr std::uint64_t kExactRanks = 4096;
    constexpr double kGroupRatio = 1.001;
    struct Raw {
        double count, weight;
    };
    std::vector<Raw> raw;
    const std::uint64_t exact = std::min(n, kExactRanks);
    for (std::uint64_t j = 1; j <= exact; ++j)
        raw.push_back({1.0, std::pow(static_cast<double>(j), -s)});
    for (std::uint64_t a = exact + 1; a <= n;) {
        const auto grown = static_cast<std::uint64_t>(static_cast<double>(a) * kGroupRatio);
        const std::uint64_t b = std::min(n, std::max(a, grown));
        // Sum of j^-s over [a, b] by the midpoint rule, accurate to ~1e-8 relative for j > 4096.
        raw.push_back({static_cast<double>(b - a + 1),
                       power_integral(static_cast<double>(a) - 0.5, static_cast<double>(b) + 0.5, s)});
        a = b + 1;
    }
    for (const Raw &r : raw)
        harmonic_ += r.weight;
    for (const Raw &r : raw)
        groups_.push_back({r.count, std::log1p(-(r.weight / r.count) / harmonic_)});
}

double ZipfDistinctModel::probability(std::uint64_t j) const {
    return std::pow(static_cast<double>(j), -s_) / harmonic_;
}

double ZipfDistinctModel::expected_distinct(double lookups) const {
    double sum = 0;
    for (const Group &g : groups_)
        sum += g.count * -std::expm1(lookups * g.log1m_prob);
    return sum;
}

double ZipfDistinctModel::lookups_for(double target) const {
    if (target <= 0) return 0;
    // E(L) <= L, so L = target is a lower bound; grow the upper bound geometrically.
    double lo = target, hi = 2 * target;
    while (expected_distinct(hi) < target && hi < 1e18) {
        lo = hi;
        hi *= 4;
    }
    for (int i = 0; i < 100 && hi - lo > 0.5; ++i) {
        const double mid = std::sqrt(lo * hi);
        (expected_distinct(mid) < target ? lo : hi) = mid;
    }
    return hi;
}

}  // namespace bench
