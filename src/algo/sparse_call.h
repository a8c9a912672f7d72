// The steps every sparse call shares once a rank knows its contribution: agree with the other ranks
// (arguments, errors, per-bin non-zero counts), plan, and run the chosen sparse algorithm.
#pragma once

#include <cstdint>

#include "algo/contribution_source.h"
#include "algo/result_sink.h"
#include "core/block_layout.h"
#include "core/element_type.h"
#include "core/planner.h"

namespace mpix::sparse::detail {

class CommState;

struct SparseCall {
    std::uint64_t seq = 0;
    BlockLayout layout;
    ElementType type = ElementType::F32;
    ReduceOp op = ReduceOp::Sum;
    bool sparse_capable = true;   // false: type/op codes are placeholders, the dense path serves
    bool output_to_zero = false;  // the sparse paths must zero a dense output themselves
    std::uint64_t nonzero = 0;    // this rank's blocks with data
};

// Collective over the workers. `local_error` is this rank's own argument error (it still takes part
// so the others learn of it instead of waiting). Throws Error(RemoteArgument) when another rank
// reported an error, Error(ArgumentMismatch) when ranks disagree on count, type, op or block size.
// Without allow_dense the cheaper sparse algorithm is chosen even when dense would be cheaper (the
// element variant's sparse output needs the union, which the dense path does not produce).
Plan agree_on_plan(CommState &state, const SparseCall &call, const ContributionSource &source, bool local_error,
                   bool allow_dense = true);

// Runs the aggregator or allgather algorithm of `plan` (not Dense) and updates the statistics.
void run_sparse(CommState &state, const SparseCall &call, const Plan &plan, const ContributionSource &source,
                ResultSink &sink);

}  // namespace mpix::sparse::detail
