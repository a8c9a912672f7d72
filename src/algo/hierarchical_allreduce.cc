#include "algo/hierarchical_allreduce.h"

#include <utility>

#include "algo/block_allreduce.h"
#include "algo/sparse_operation.h"
#include "core/comm_state.h"
#include "core/device_memory.h"
#include "core/element_type.h"
#include "core/library.h"

namespace mpix::sparse::detail {
namespace {

Algorithm algorithm_of(const Operation &op) {
    const auto *s = dynamic_cast<const SparseOperation *>(&op);
    return s != nullptr ? s->algorithm() : Algorithm::Dense;
}

const OpCounters *counters_of(const Operation *op) {
    const auto *s = dynamic_cast<const SparseOperation *>(op);
    return s != nullptr ? &s->counters() : nullptr;
}

}  // namespace

HierarchicalAllreduce::HierarchicalAllreduce(CommState &state, NodeHierarchy &levels, const void *sendbuf,
                                             void *recvbuf, std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                                             BufferKinds kinds, bool local_failure)
    : state_(state), levels_(levels), sendbuf_(sendbuf), recvbuf_(recvbuf), count_(count), datatype_(datatype), op_(op),
      kinds_(kinds), local_failure_(local_failure), scratch_() {}

HierarchicalAllreduce::~HierarchicalAllreduce() {
    // A level still in line leaves it; one already running is waited for (its peers need it), never
    // abandoned. Normally both are retired here (the caller waited for this operation).
    for (Operation *op : {node_op_.get(), leader_op_.get()}) {
        if (op == nullptr) continue;
        CommState *level = op == node_op_.get() ? levels_.node_state.get() : levels_.leader_state.get();
        bool out_of_line = false;
        {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            out_of_line = op->retired() || level->withdraw(*op);
        }
        if (!out_of_line) Library::get().wait_until([op] { return op->retired(); });
    }
    broadcast_.reset();  // completes its MPI requests first: not under the engine lock
    dispose(std::move(node_op_));
    dispose(std::move(leader_op_));
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    if (scratch_) state_.give_back(std::move(scratch_));
}

void HierarchicalAllreduce::reset() {
    dispose(std::move(node_op_));
    dispose(std::move(leader_op_));
    broadcast_.reset();
    error_ = OpError{};
    stage_ = Stage::Node;
}

void HierarchicalAllreduce::activate() {
    if (!scratch_) scratch_ = borrow_scratch(state_);
    node_op_ =
        make_block_allreduce(*levels_.node_state, sendbuf_, recvbuf_, count_, datatype_, op_, kinds_, local_failure_);
    levels_.node_state->start(*node_op_);
    stage_ = Stage::Node;
}

void HierarchicalAllreduce::on_message(InboundMessage &&message) {
    // The levels have contexts of their own; nothing streams on this one.
    state_.links().release(message);
}

void HierarchicalAllreduce::fail(OpError error) {
    if (!error_) error_ = std::move(error);
    // Failed before the node level could start (activation threw): nothing to take part in yet.
    if (stage_ == Stage::Node && !node_op_) {
        stage_ = Stage::Done;
        if (PhaseProfile *profile = state_.profile()) ++profile->calls;  // counted, as a flat call's is
    }
}

void HierarchicalAllreduce::abandon(OpError error) {
    // The levels' operations and the broadcast's requests stay with the parked operation.
    error_ = std::move(error);
    stage_ = Stage::Done;
    mark_abandoned();
}

void HierarchicalAllreduce::start_broadcast() {
    const auto type = element_type_of(datatype_);
    const BlockLayout layout{count_, state_.config().block_elems, static_cast<std::uint32_t>(element_size(*type))};
    if (levels_.node_state->size() == 1) {
        finish();
        return;
    }
    // Whether the final result came from a dense reduction (one leader alone reduces nothing).
    const Operation &top = leader_op_ && levels_.leader_state->size() > 1 ? *leader_op_ : *node_op_;
    broadcast_.emplace(levels_.node_state->comm(), recvbuf_, layout, datatype_, scratch_->resources.buffers,
                       scratch_->bitmap, on_device(kinds_.recv) ? device_memory() : nullptr, scratch_->device);
    if (state_.profile() != nullptr) broadcast_since_ = profile_clock_ns();  // the leader's scan included
    broadcast_->start(algorithm_of(top) == Algorithm::Dense, static_cast<bool>(error_));
    stage_ = Stage::Broadcast;
}

bool HierarchicalAllreduce::progress() {
    switch (stage_) {
    case Stage::Node:
        if (!node_op_ || !node_op_->retired()) return false;
        if (!error_ && node_op_->error()) error_ = node_op_->error();
        if (levels_.leader_state) {
            leader_op_ = make_block_allreduce(*levels_.leader_state, MPI_IN_PLACE, recvbuf_, count_, datatype_, op_,
                                              BufferKinds{kinds_.recv, kinds_.recv}, static_cast<bool>(error_));
            levels_.leader_state->start(*leader_op_);
            stage_ = Stage::Leaders;
        } else {
            start_broadcast();
        }
        return true;
    case Stage::Leaders:
        if (!leader_op_->retired()) return false;
        if (!error_ && leader_op_->error()) error_ = leader_op_->error();
        start_broadcast();
        return true;
    case Stage::Broadcast:
        if (!broadcast_->progress()) return false;
        if (broadcast_->done()) {
            if (!error_ && broadcast_->error()) error_ = broadcast_->error();
            finish();
        }
        return true;
    case Stage::Done: return false;
    }
    return false;
}

void HierarchicalAllreduce::finish() {
    if (PhaseProfile *profile = state_.profile()) {
        if (stage_ == Stage::Broadcast) profile->add(Phase::NodeBroadcast, profile_clock_ns() - broadcast_since_);
        ++profile->calls;
    }
    stage_ = Stage::Done;
    CommStats &stats = state_.stats();
    std::int64_t sent = 0, received = 0;
    for (const Operation *op : {node_op_.get(), leader_op_.get()}) {
        if (const OpCounters *c = counters_of(op)) {
            sent += static_cast<std::int64_t>(c->bytes_sent);
            received += static_cast<std::int64_t>(c->bytes_received);
            stats.bytes_in_place += static_cast<std::int64_t>(c->bytes_in_place);
        }
    }
    // The node broadcast: the leader sends once per other rank, the others receive.
    const auto broadcast = static_cast<std::int64_t>(broadcast_ ? broadcast_->bytes() : 0);
    if (levels_.leader_state)
        sent += broadcast * (levels_.node_state->size() - 1);
    else
        received += broadcast;
    stats.bytes_sent += sent;
    stats.bytes_received += received;
    stats.last_algorithm = static_cast<int>(algorithm_of(*node_op_));
    if (stats.last_algorithm == static_cast<int>(Algorithm::Dense)) ++stats.dense_fallbacks;
    broadcast_.reset();
    if (scratch_) state_.give_back(std::move(scratch_));
}

std::string HierarchicalAllreduce::describe() const {
    std::string s = "hierarchical operation " + std::to_string(seq()) + ": ";
    if (stage_ == Stage::Node && node_op_) s += "node level: " + node_op_->describe();
    if (stage_ == Stage::Leaders) s += "leader level: " + leader_op_->describe();
    if (stage_ == Stage::Broadcast) s += "node broadcast";
    return s;
}

}  // namespace mpix::sparse::detail
