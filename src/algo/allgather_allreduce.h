// The allgather algorithm for tiny inputs, where latency dominates: every worker gathers every
// worker's non-zero blocks (or pairs) in one MPI_Allgather, each contribution padded to the largest,
// and reduces them locally in rank order. Cost: log P latencies + P * k bytes per rank.
#pragma once

#include <cstdint>

#include "algo/contribution_source.h"
#include "algo/op_counters.h"
#include "algo/result_sink.h"
#include "core/block_layout.h"
#include "core/element_type.h"

namespace mpix::sparse::detail {

class CommState;

// Bytes one rank contributes for `max_blocks` blocks of `layout`.
std::uint64_t allgather_record_bytes(const BlockLayout &layout, std::uint64_t max_blocks);

// `max_blocks` is the most blocks any worker has (from the agreement); the caller checked that
// allgather_record_bytes() fits an MPI count.
void allgather_allreduce(CommState &state, const BlockLayout &layout, ElementType type, ReduceOp op,
                         const ContributionSource &source, std::uint64_t max_blocks, ResultSink &sink,
                         OpCounters &counters);

}  // namespace mpix::sparse::detail
