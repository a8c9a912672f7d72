#include "algo/sparse_call.h"

#include <climits>
#include <vector>

#include "algo/allgather_allreduce.h"
#include "core/comm_state.h"
#include "core/error.h"
#include "core/library.h"

namespace mpix::sparse::detail {
namespace {

bool all_equal(const SumMax &v, int ranks) {
    return v.sum == v.max * ranks;
}

}  // namespace

Plan agree_on_plan(CommState &state, const SparseCall &call, const ContributionSource &source, bool local_error,
                   bool allow_dense) {
    const Group &group = state.group();
    const int workers = state.size();
    const int aggregators = static_cast<int>(group.aggregators.size());
    const std::size_t bins = histogram_bins(aggregators);
    const std::uint64_t blocks = call.layout.num_blocks();
    const std::uint64_t width = bin_width(blocks, bins);

    std::vector<SumMax> v(AgreementFields::kHeader + bins);
    auto put = [&](std::size_t i, std::int64_t x) { v[i] = SumMax{x, x}; };
    put(AgreementFields::kCount, static_cast<std::int64_t>(call.layout.count));
    // Codes outside the enums mark a type or op the sparse path cannot serve: ranks must agree on that
    // too, or some would stream while others reduce densely.
    constexpr std::int64_t kNotSparse = 99;
    put(AgreementFields::kType, call.sparse_capable ? static_cast<std::int64_t>(call.type) : kNotSparse);
    put(AgreementFields::kOp, call.sparse_capable ? static_cast<std::int64_t>(call.op) : kNotSparse);
    put(AgreementFields::kBlockElems, call.layout.block_elems);
    put(AgreementFields::kError, local_error ? 1 : 0);
    put(AgreementFields::kAlgorithm, static_cast<std::int64_t>(state.config().algorithm));
    put(AgreementFields::kNonzero, local_error ? 0 : static_cast<std::int64_t>(call.nonzero));
    for (std::size_t j = 0; j < bins && !local_error; ++j) {
        const std::uint64_t lo = std::min(blocks, j * width);
        const std::uint64_t hi = std::min(blocks, lo + width);
        put(AgreementFields::kHeader + j, static_cast<std::int64_t>(lo < hi ? source.count(lo, hi) : 0));
    }
    const int rc = Library::get().agreement().allreduce(v, state.comm());
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "agreement MPI_Allreduce");
    if (v[AgreementFields::kError].max > 0) {
        if (local_error) return Plan{};  // the caller raises its own, more precise error
        fail(ErrorId::RemoteArgument);
    }
    for (std::size_t f : {AgreementFields::kCount, AgreementFields::kType, AgreementFields::kOp,
                          AgreementFields::kBlockElems, AgreementFields::kAlgorithm})
        if (!all_equal(v[f], workers)) fail(ErrorId::ArgumentMismatch);

    Demand d;
    d.workers = workers;
    d.aggregators = aggregators;
    d.dedicated = group.dedicated;
    d.layout = call.layout;
    d.nonzero_sum = static_cast<std::uint64_t>(v[AgreementFields::kNonzero].sum);
    d.nonzero_max = static_cast<std::uint64_t>(v[AgreementFields::kNonzero].max);
    d.bins.assign(v.begin() + AgreementFields::kHeader, v.end());
    d.bin_width = width;
    d.output_to_zero = call.output_to_zero;
    Plan plan = make_plan(d, state.config());
    if (!call.sparse_capable) {
        plan.algorithm = Algorithm::Dense;
        return plan;
    }
    if (!allow_dense && plan.algorithm == Algorithm::Dense) {
        plan.algorithm =
            plan.cost.allgather_us < plan.cost.aggregator_us ? Algorithm::Allgather : Algorithm::Aggregator;
        if (plan.algorithm == Algorithm::Aggregator) plan.shard_bounds = balance_shards(d);
    }
    // One rank's allgather record must fit an MPI count; beyond that the aggregators serve.
    if (plan.algorithm == Algorithm::Allgather &&
        allgather_record_bytes(call.layout, plan.max_contribution) > static_cast<std::uint64_t>(INT_MAX / 2)) {
        plan.algorithm = Algorithm::Aggregator;
        plan.shard_bounds = balance_shards(d);
    }
    return plan;
}

void run_sparse(CommState &state, const SparseCall &call, const Plan &plan, const ContributionSource &source,
                ResultSink &sink) {
    CommStats &stats = state.stats();
    stats.last_algorithm = static_cast<int>(plan.algorithm);
    if (plan.algorithm == Algorithm::Allgather) {
        OpCounters counters;
        allgather_allreduce(state, call.layout, call.type, call.op, source, plan.max_contribution, sink, counters);
        stats.bytes_sent += static_cast<std::int64_t>(counters.bytes_sent);
        stats.bytes_received += static_cast<std::int64_t>(counters.bytes_received);
        return;
    }
    const Group &group = state.group();
    StreamSpec spec;
    spec.context = state.context();
    spec.seq = call.seq;
    spec.layout = call.layout;
    spec.type = call.type;
    spec.op = call.op;
    spec.worker_peer = group.workers;
    spec.aggregator_peer = group.aggregators;
    spec.shard_bounds = plan.shard_bounds;
    spec.my_worker = group.my_worker();
    spec.my_aggregator = group.my_aggregator();
    spec.message_bytes = state.config().message_bytes;
    spec.window = state.config().window;
    state.run_stream(spec, &source, &sink);
}

}  // namespace mpix::sparse::detail
