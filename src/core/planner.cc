#include "core/planner.h"

#include <algorithm>
#include <cmath>

namespace mpix::sparse::detail {

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

double dense_ns_per_byte(const CostParams &c, double bytes) {
    const auto &t = c.dense_table;
    if (t.empty()) return 1.0;
    const double mib = bytes / 1048576.0;
    if (mib <= t.front().mib) return t.front().ns;
    for (std::size_t i = 1; i < t.size(); ++i) {
        if (mib > t[i].mib) continue;
        const double x = (std::log2(mib) - std::log2(t[i - 1].mib)) / (std::log2(t[i].mib) - std::log2(t[i - 1].mib));
        return t[i - 1].ns + x * (t[i].ns - t[i - 1].ns);
    }
    return t.back().ns;
}

CostFeatures cost_features(const Demand &d) {
    CostFeatures f;
    const double P = d.workers;
    const double A = d.aggregators;
    const double N = static_cast<double>(d.layout.total_bytes());
    const double bb = static_cast<double>(d.layout.block_bytes());
    const double S = static_cast<double>(d.nonzero_sum);
    const double D = static_cast<double>(d.nonzero_max);
    const double blocks = static_cast<double>(d.layout.num_blocks());
    double U = 0;
    for (std::size_t j = 0; j < d.bins.size(); ++j) {
        const std::uint64_t lo = j * d.bin_width;
        if (lo >= d.layout.num_blocks()) break;
        U += estimated_union(d.bins[j], std::min(d.bin_width, d.layout.num_blocks() - lo));
    }
    f.union_blocks = U;
    constexpr double kNsPerUs = 1e3;
    f.dense[0] = 1.0;
    f.dense[1] = 2.0 * (P - 1) / P * N / kNsPerUs;
    // Blocks the busiest rank sends or receives (contributions, then the union), then in bytes.
    double busiest_blocks;
    if (d.dedicated)
        busiest_blocks = std::max(S / A + (U / A) * P, D + U);
    else
        busiest_blocks = D * (A - 1) / A + (S / A) * (P - 1) / P + (U / A) * (P - 1) + U * (A - 1) / A;
    const double busiest = bb * busiest_blocks;
    // Messages travel as dense runs (no copy) only when whole runs of blocks are present; with any
    // gaps in a dense-ish union, contributions are gathered and results placed block by block.
    const bool union_full = U >= 0.999 * blocks && D >= 0.999 * blocks;
    const double packed = union_full ? 0.0 : bb * (D + U);
    f.aggregator[0] = 1.0;
    f.aggregator[1] = busiest / kNsPerUs;
    f.aggregator[2] = packed / kNsPerUs;
    f.aggregator[3] = busiest_blocks / kNsPerUs;
    // The output's gaps, zeros every rank writes once its results are in: where ranks take turns on
    // cores they finish these writes one after another, and the stream's closing barrier holds each
    // rank until the last is done (the allgather has no such barrier).
    if (d.cores_shared && d.dense_output) f.aggregator[4] = std::max(0.0, N - U * bb) / kNsPerUs;
    f.allgather[0] = std::ceil(std::log2(std::max(P, 2.0)));
    // A gathered block carries its number (algo/allgather_allreduce.h).
    f.allgather[1] = P * D * (bb + static_cast<double>(d.layout.number_bytes())) / kNsPerUs;
    f.allgather[2] = P * D / kNsPerUs;
    f.output_zero = d.output_to_zero ? N / kNsPerUs : 0.0;
    if (d.nodes > 1 && P > 1) {
        // Links are full duplex: what counts is the bytes one way. A ring (MPI_Allreduce) crosses
        // each node boundary once, so a node's ranks do not share its link there, while link_ns was
        // measured with all of them sending across at once; the sparse algorithms talk to every
        // rank, of which those on other nodes cross.
        const double ppn = std::max(1, d.ranks_per_node);
        const double cross = (P - ppn) / (P - 1);
        f.link[0] = f.dense[1] / ppn;
        // With node multicast an aggregator's union crosses to each other node once, not to each
        // rank there (colocated: its share of the busiest rank's blocks is (U/A)(P-1)), and a rank
        // receives another node's results across the link only for the aggregators it receives for
        // (one rank in ppn on average; the rest come from its node: U(A-1)/A of its blocks).
        double link_blocks = busiest_blocks * cross;
        if (d.node_multicast && !d.dedicated)
            link_blocks += (U / A) * (static_cast<double>(d.nodes) - 1.0 - (P - 1) * cross) -
                           U * (A - 1) / A * cross * (1.0 - 1.0 / ppn);
        f.link[1] = bb * link_blocks / 2 / kNsPerUs;
        f.link[2] = f.allgather[1] * (P - 1) / P * cross;
    }
    return f;
}

CostEstimate estimate_costs(const Demand &d, const CostParams &c) {
    const CostFeatures f = cost_features(d);
    CostEstimate e;
    e.union_blocks = f.union_blocks;
    e.dense_us =
        c.dense_alpha_us * f.dense[0] + dense_ns_per_byte(c, static_cast<double>(d.layout.total_bytes())) * f.dense[1];
    // Every path writes the whole output: the dense one when it densifies the pairs.
    const double zero = c.memory_ns * f.output_zero;
    e.dense_us += zero;
    e.aggregator_us = c.sparse_alpha_us * f.aggregator[0] + c.sparse_beta_ns * f.aggregator[1] +
                      c.sparse_copy_ns * f.aggregator[2] + c.sparse_block_ns * f.aggregator[3] +
                      c.shared_core_gap_ns * f.aggregator[4] + zero;
    e.allgather_us = c.allgather_alpha_us * f.allgather[0] + c.allgather_beta_ns * f.allgather[1] +
                     c.allgather_block_ns * f.allgather[2] + zero;
    e.dense_us += c.link_ns * f.link[0];  // the link features are zero on one node
    e.aggregator_us += c.link_ns * f.link[1];
    e.allgather_us += c.link_ns * f.link[2];
    if (d.device) {
        // Staging: dense moves the buffer down and back up; sparse the busiest contribution down and
        // the union up.
        const double N = static_cast<double>(d.layout.total_bytes());
        const double bb = static_cast<double>(d.layout.block_bytes());
        const double sparse_bytes = (static_cast<double>(d.nonzero_max) + f.union_blocks) * bb;
        e.dense_us += c.pcie_ns * 2.0 * N / 1e3;
        e.aggregator_us += c.pcie_ns * sparse_bytes / 1e3;
        e.allgather_us += c.pcie_ns * sparse_bytes / 1e3;
    }
    return e;
}

void balance_shards(const Demand &d, std::vector<std::uint64_t> &bounds) {
    const auto A = static_cast<std::size_t>(d.aggregators);
    const std::uint64_t blocks = d.layout.num_blocks();
    bounds.assign(A + 1, 0);
    bounds[A] = blocks;
    // Work of a bin: contributions to receive plus the union to send back to every other worker.
    std::size_t bins = 0;
    while (bins < d.bins.size() && bins * d.bin_width < blocks)
        ++bins;
    auto width_of = [&](std::size_t j) { return std::min(d.bin_width, blocks - j * d.bin_width); };
    auto work = [&](std::size_t j) {
        return static_cast<double>(d.bins[j].sum) + (d.workers - 1) * estimated_union(d.bins[j], width_of(j));
    };
    double total = 0;
    for (std::size_t j = 0; j < bins; ++j)
        total += work(j);
    if (total <= 0) {
        for (std::size_t a = 1; a < A; ++a)
            bounds[a] = blocks * a / A;
        return;
    }
    // Cut at equal shares of the cumulative work, interpolating inside a bin (work assumed uniform
    // there), so shards are balanced to within a block, not a bin.
    std::size_t j = 0;
    double before = 0;
    for (std::size_t a = 1; a < A; ++a) {
        const double target = total * static_cast<double>(a) / static_cast<double>(A);
        while (j < bins && before + work(j) < target)
            before += work(j++);
        std::uint64_t cut = blocks;
        if (j < bins) {
            const double w = work(j);
            const double frac = w > 0 ? (target - before) / w : 0.0;
            cut = j * d.bin_width + static_cast<std::uint64_t>(std::llround(frac * static_cast<double>(width_of(j))));
        }
        bounds[a] = std::clamp(cut, bounds[a - 1], blocks);
    }
}

std::vector<std::uint64_t> balance_shards(const Demand &d) {
    std::vector<std::uint64_t> bounds;
    balance_shards(d, bounds);
    return bounds;
}

Plan make_plan(const Demand &d, const Config &config) {
    Plan p;
    make_plan(d, config, p);
    return p;
}

void make_plan(const Demand &d, const Config &config, Plan &p) {
    p.shard_bounds.clear();
    p.cost = estimate_costs(d, config.cost);
    p.max_contribution = d.nonzero_max;
    switch (config.algorithm) {
    case AlgorithmChoice::Dense: p.algorithm = Algorithm::Dense; break;
    case AlgorithmChoice::Aggregator: p.algorithm = Algorithm::Aggregator; break;
    case AlgorithmChoice::Allgather: p.algorithm = Algorithm::Allgather; break;
    case AlgorithmChoice::Auto: {
        const bool allgather = p.cost.allgather_us < p.cost.aggregator_us;
        const double sparse = allgather ? p.cost.allgather_us : p.cost.aggregator_us;
        if (sparse * config.cost.sparse_margin < p.cost.dense_us)
            p.algorithm = allgather ? Algorithm::Allgather : Algorithm::Aggregator;
        else
            p.algorithm = Algorithm::Dense;
        break;
    }
    }
    if (p.algorithm == Algorithm::Aggregator) balance_shards(d, p.shard_bounds);
}

}  // namespace mpix::sparse::detail
