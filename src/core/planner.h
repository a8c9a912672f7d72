// The planner: from what the agreement told every rank (identical inputs everywhere, hence identical
// plans), choose the algorithm with the cost model and cut the block space into aggregator shards
// that balance non-zero work rather than index ranges.
#pragma once

#include <cstdint>
#include <vector>

#include "core/agreement.h"
#include "core/block_layout.h"
#include "core/config.h"

namespace mpix::sparse::detail {

// Values match MPIX_SPARSE_ALGORITHM_*.
enum class Algorithm : int { Dense = 0, Aggregator = 1, Allgather = 2 };

struct Demand {
    int workers = 1;
    int aggregators = 1;
    bool dedicated = false;  // aggregators hold no data
    BlockLayout layout;
    std::uint64_t nonzero_sum = 0;  // blocks with data, summed over workers
    std::uint64_t nonzero_max = 0;  // the most any worker has
    std::vector<SumMax> bins;       // blocks with data per bin of bin_width blocks: sum and max
    std::uint64_t bin_width = 1;
    bool output_to_zero = false;  // a sparse algorithm must zero the whole output (element variant)
    bool device = false;          // some rank's buffers are in device memory (staged over PCIe)
    int nodes = 1;                // nodes the ranks are on, and the most ranks on one of them
    int ranks_per_node = 1;
    bool node_multicast = false;  // results cross to each other node once per aggregator
    bool dense_output = true;     // the output is a dense buffer (not the element variant's pairs)
    // Some node runs more ranks than it has cores (core/node_layout.h): they take turns on them.
    bool cores_shared = false;
    // Every rank's input and output are read in place by its peers (MPIX_Sparse_alloc_mem): fewer
    // copies than the model's constants assume. Only the tuner tells such calls apart.
    bool in_place = false;
};

struct CostEstimate {
    double dense_us = 0, aggregator_us = 0, allgather_us = 0;
    double union_blocks = 0;
};

// The cost model is linear in its constants: cost = sum of constant * feature. The features of a
// demand, per algorithm (µs per unit of the matching CostParams field), for fitting the constants
// (bench/calibrate_cost_model) and for estimate_costs.
struct CostFeatures {
    // dense: {1, 2(P-1)/P * N in thousands of bytes} x {alpha_us, ns per byte (dense_ns_per_byte)}
    double dense[2] = {};
    // aggregator: {1, busiest-rank bytes, packed bytes, busiest-rank blocks, gap bytes where ranks
    //             share cores} x {alpha_us, beta_ns, copy_ns, block_ns, shared_core_gap_ns}
    double aggregator[5] = {};
    // allgather: {log2 steps, gathered bytes, merged blocks} x {alpha_us, beta_ns, block_ns}
    double allgather[3] = {};
    // every algorithm (the element variant writes its whole output): output bytes to zero x memory_ns
    double output_zero = 0;
    // bytes (thousands) crossing nodes per link direction, per algorithm (dense, aggregator,
    // allgather) x link_ns; zero on one node
    double link[3] = {};
    double union_blocks = 0;
};
CostFeatures cost_features(const Demand &demand);
// MPI_Allreduce's ns per byte for an N-byte message, from the table.
double dense_ns_per_byte(const CostParams &cost, double bytes);

struct Plan {
    Algorithm algorithm = Algorithm::Dense;
    std::vector<std::uint64_t> shard_bounds;  // aggregators + 1 entries (aggregator algorithm)
    std::uint64_t max_contribution = 0;       // most blocks any worker has (allgather sizing)
    CostEstimate cost;
};

// Bins of the agreement's histogram: a function of the aggregator count only (agreed when the
// communicator is created), so every rank sizes the agreement identically even if ranks disagree on
// the call's count (which the agreement then reports).
std::size_t histogram_bins(int aggregators);
std::uint64_t bin_width(std::uint64_t num_blocks, std::size_t bins);

// Expected size of the union of blocks in a bin from the sum and max of per-rank counts: a random
// (Poisson) overlap model, never below the largest single rank.
double estimated_union(const SumMax &bin, std::uint64_t width);

CostEstimate estimate_costs(const Demand &demand, const CostParams &cost);
std::vector<std::uint64_t> balance_shards(const Demand &demand);
void balance_shards(const Demand &demand, std::vector<std::uint64_t> &bounds);
Plan make_plan(const Demand &demand, const Config &config);
// The same into `plan`, reusing its memory (a persistent request plans every start).
void make_plan(const Demand &demand, const Config &config, Plan &plan);

}  // namespace mpix::sparse::detail
