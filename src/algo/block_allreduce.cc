#include "algo/block_allreduce.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "algo/contribution_source.h"
#include "algo/dense_allreduce.h"
#include "algo/node_broadcast.h"
#include "algo/result_sink.h"
#include "algo/sparse_call.h"
#include "core/block_scan.h"
#include "core/comm_state.h"
#include "core/element_type.h"
#include "core/error.h"

namespace mpix::sparse::detail {
namespace {

void serve_dense(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                 MPI_Op op) {
    if (count > 0) dense_allreduce(state, sendbuf, recvbuf, count, datatype, op);
    ++state.stats().dense_fallbacks;
    state.stats().last_algorithm = static_cast<int>(Algorithm::Dense);
}

// Inside each node, then across nodes between one leader per node, then the leader's result to its
// node (only its non-zero blocks when they are few): each node's data crosses the network once,
// already combined.
void hierarchical_allreduce(CommState &state, NodeHierarchy &h, const void *sendbuf, void *recvbuf, std::uint64_t count,
                            MPI_Datatype datatype, MPI_Op op, ElementType type) {
    CommStats &stats = state.stats();
    auto traffic = [&] {
        std::int64_t sent = h.node_state->stats().bytes_sent, received = h.node_state->stats().bytes_received;
        if (h.leader_state) {
            sent += h.leader_state->stats().bytes_sent;
            received += h.leader_state->stats().bytes_received;
        }
        return std::make_pair(sent, received);
    };
    const auto before = traffic();
    block_allreduce(*h.node_state, sendbuf, recvbuf, count, datatype, op);
    if (h.leader_state) block_allreduce(*h.leader_state, MPI_IN_PLACE, recvbuf, count, datatype, op);
    // Whether the final result came from a dense reduction (one leader alone reduces nothing).
    CommState &top = h.leader_state && h.leader_state->size() > 1 ? *h.leader_state : *h.node_state;
    const BlockLayout layout{count, state.config().block_elems, static_cast<std::uint32_t>(element_size(type))};
    const std::uint64_t broadcast = broadcast_from_leader(
        *h.node_state, recvbuf, layout, datatype, top.stats().last_algorithm == static_cast<int>(Algorithm::Dense));
    if (h.leader_state)
        stats.bytes_sent += static_cast<std::int64_t>(broadcast) * (h.node_state->size() - 1);
    else
        stats.bytes_received += static_cast<std::int64_t>(broadcast);
    const auto after = traffic();
    stats.bytes_sent += after.first - before.first;
    stats.bytes_received += after.second - before.second;
    stats.last_algorithm = h.node_state->stats().last_algorithm;
    if (stats.last_algorithm == static_cast<int>(Algorithm::Dense)) ++stats.dense_fallbacks;
}

}  // namespace

void block_allreduce(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                     MPI_Op op) {
    SparseCall call;
    call.seq = state.begin_call();
    const auto type = element_type_of(datatype);
    const auto reduce = reduce_op_of(op);
    const Config &config = state.config();
    // Decided from values every rank shares (arguments and configuration), so all ranks agree without
    // communicating: one rank, types and ops outside the sparse path, small messages, forced dense.
    const bool sparse_capable = type && reduce && is_sparse_capable(*type, *reduce);
    if (!sparse_capable || count == 0 || state.size() == 1 || config.algorithm == AlgorithmChoice::Dense ||
        count * element_size(*type) < config.dense_below_bytes) {
        serve_dense(state, sendbuf, recvbuf, count, datatype, op);
        return;
    }
    if (NodeHierarchy *h = state.hierarchy()) {
        hierarchical_allreduce(state, *h, sendbuf, recvbuf, count, datatype, op, *type);
        return;
    }
    // Recent calls like this one were dense: stay dense without scanning or agreeing (see DenseStreak).
    if (config.algorithm == AlgorithmChoice::Auto && state.dense_streak().take(count, datatype, op)) {
        serve_dense(state, sendbuf, recvbuf, count, datatype, op);
        return;
    }
    call.type = *type;
    call.op = *reduce;
    call.layout = BlockLayout{count, config.block_elems, static_cast<std::uint32_t>(element_size(*type))};
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const auto *input = static_cast<const std::byte *>(in_place ? recvbuf : sendbuf);
    auto *output = static_cast<std::byte *>(recvbuf);

    BlockBitmap &bitmap = state.bitmap();
    bitmap.reset(call.layout.num_blocks());
    // One pass: find the non-zero blocks and write the zeros of the output where this rank has none
    // (in place, those bytes are zero already).
    call.nonzero = scan_blocks(input, call.layout, bitmap, in_place ? nullptr : output);
    BitmapSource source(input, call.layout, bitmap);

    const Plan plan = agree_on_plan(state, call, source, false);
    state.dense_streak().record(count, datatype, op, plan.algorithm == Algorithm::Dense);
    if (plan.algorithm == Algorithm::Dense) {
        serve_dense(state, sendbuf, recvbuf, count, datatype, op);
        return;
    }
    DenseResultSink sink(output, call.layout);
    run_sparse(state, call, plan, source, sink);
}

}  // namespace mpix::sparse::detail
