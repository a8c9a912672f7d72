#include "core/planner.h"

#include <algorithm>
#include <cmath>

namespace mpix::sparse {

std::size_t histogram_bins(int aggregators) {
    return static_cast<std::size_t>(std::clamp(16 * aggregators, 64, 1024));
}

std::uint64_t bin_width(std::uint64_t num_blocks, std::size_t bins) {
    return std::max<std::uint64_t>(1, (num_blocks + bins - 1) / bins);
}

double estimated_union(const SumMax &bin, std::uint64_t width) {
    if (bin.sum <= 0 || width == 0) return 0.0;
    const double w = static_cast<double>(width);
    const double random_overlap = w * (1.0 - std::exp(-static_cast<double>(bin.sum) / w));
    return std::max(random_overlap, static_cast<double>(bin.max));
}

CostEstimate estimate_costs(const Demand &d, const CostParams &c) {
    CostEstimate e;
    const double P = d.workers;
    const double A = d.aggregators;
    const double N = static_cast<double>(d.layout.total_bytes());
    const double bb = static_cast<double>(d.layout.block_bytes());
    const double S = static_cast<double>(d.nonzero_sum);
    const double D = static_cast<double>(d.nonzero_max);
    double U = 0;
    const std::uint64_t blocks = d.layout.num_blocks();
    for (std::size_t j = 0; j < d.bins.size(); ++j) {
        const std::uint64_t lo = j * d.bin_width;
        if (lo >= blocks) break;
        U += estimated_union(d.bins[j], std::min(d.bin_width, blocks - lo));
    }
    e.union_blocks = U;
    constexpr double kNsPerUs = 1e3;
    e.dense_us = c.dense_alpha_us + c.dense_beta_ns * 2.0 * (P - 1) / P * N / kNsPerUs;
    double busiest_bytes;
    if (d.dedicated) {
        const double aggregator = S / A + (U / A) * P;
        const double worker = D + U;
        busiest_bytes = bb * std::max(aggregator, worker);
    } else {
        busiest_bytes = bb * (D * (A - 1) / A + (S / A) * (P - 1) / P + (U / A) * (P - 1) + U * (A - 1) / A);
    }
    e.aggregator_us = c.sparse_alpha_us + c.sparse_beta_ns * busiest_bytes / kNsPerUs;
    const double gathered = P * D * (bb + 8.0);
    e.allgather_us = c.allgather_alpha_us * std::ceil(std::log2(std::max(P, 2.0))) +
                     c.allgather_beta_ns * gathered / kNsPerUs;
    return e;
}

std::vector<std::uint64_t> balance_shards(const Demand &d) {
    const auto A = static_cast<std::size_t>(d.aggregators);
    const std::uint64_t blocks = d.layout.num_blocks();
    std::vector<std::uint64_t> bounds(A + 1, 0);
    bounds[A] = blocks;
    // Work of a bin: contributions to receive plus the union to send back to every other worker.
    std::vector<double> work;
    double total = 0;
    for (std::size_t j = 0; j < d.bins.size(); ++j) {
        const std::uint64_t lo = j * d.bin_width;
        if (lo >= blocks) break;
        const std::uint64_t width = std::min(d.bin_width, blocks - lo);
        const double w = static_cast<double>(d.bins[j].sum) +
                         (d.workers - 1) * estimated_union(d.bins[j], width);
        work.push_back(w);
        total += w;
    }
    if (total <= 0) {
        for (std::size_t a = 1; a < A; ++a) bounds[a] = blocks * a / A;
        return bounds;
    }
    // Cut at equal shares of the cumulative work, interpolating inside a bin (work assumed uniform
    // there), so shards are balanced to within a block, not a bin.
    std::size_t j = 0;
    double before = 0;
    for (std::size_t a = 1; a < A; ++a) {
        const double target = total * static_cast<double>(a) / static_cast<double>(A);
        while (j < work.size() && before + work[j] < target) before += work[j++];
        std::uint64_t cut = blocks;
        if (j < work.size()) {
            const std::uint64_t lo = j * d.bin_width;
            const std::uint64_t width = std::min(d.bin_width, blocks - lo);
            const double frac = work[j] > 0 ? (target - before) / work[j] : 0.0;
            cut = lo + static_cast<std::uint64_t>(std::llround(frac * static_cast<double>(width)));
        }
        bounds[a] = std::clamp(cut, bounds[a - 1], blocks);
    }
    return bounds;
}

Plan make_plan(const Demand &d, const Config &config) {
    Plan p;
    p.cost = estimate_costs(d, config.cost);
    p.max_contribution = d.nonzero_max;
    switch (config.algorithm) {
    case AlgorithmChoice::Dense: p.algorithm = Algorithm::Dense; break;
    case AlgorithmChoice::Aggregator: p.algorithm = Algorithm::Aggregator; break;
    case AlgorithmChoice::Allgather: p.algorithm = Algorithm::Allgather; break;
    case AlgorithmChoice::Auto: {
        p.algorithm = Algorithm::Dense;
        double best = p.cost.dense_us;
        if (p.cost.aggregator_us < best) {
            best = p.cost.aggregator_us;
            p.algorithm = Algorithm::Aggregator;
        }
        if (p.cost.allgather_us < best) p.algorithm = Algorithm::Allgather;
        break;
    }
    }
    if (p.algorithm == Algorithm::Aggregator) p.shard_bounds = balance_shards(d);
    return p;
}

}  // namespace mpix::sparse
