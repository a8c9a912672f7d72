#include "algo/streaming_operation.h"

#include <algorithm>

namespace mpix::sparse::detail {

StreamingOperation::StreamingOperation(const StreamSpec &spec, Transport &transport, StreamResources &resources,
                                       OpCounters &counters, const ContributionSource *source, ResultSink *sink,
                                       int group_rank)
    : spec_(spec), transport_(transport), resources_(resources), group_rank_(group_rank) {
    if (spec.my_worker >= 0) worker_.emplace(spec, transport, resources, counters, *source, *sink);
    if (spec.my_aggregator >= 0)
        aggregator_.emplace(spec, transport, resources, counters, spec.my_worker >= 0 ? source : nullptr,
                            spec.my_worker >= 0 ? sink : nullptr, worker_ ? &*worker_ : nullptr);
    reserve_draining();
    reserve_pools();
    if (group_rank_ < 0)
        group_rank_ = spec.my_worker >= 0 ? spec.worker_peer[static_cast<std::size_t>(spec.my_worker)]
                                          : spec.aggregator_peer[static_cast<std::size_t>(spec.my_aggregator)];
}

void StreamingOperation::park() {
    for (auto &m : aborts_)
        resources_.drain(std::move(m));
    aborts_.clear();
    if (worker_) worker_->park();
    if (aggregator_) aggregator_->park();
}

void StreamingOperation::restart() {
    reserve_draining();
    park();
    error_ = OpError{};
    remote_ = false;
    aborts_sent_ = false;
    fetches_settled_ = false;
    if (worker_) worker_->restart();
    if (aggregator_) aggregator_->restart();
}

void StreamingOperation::reserve_pools() {
    // Records for every send and piece the roles can have at once, made up front: how many are in
    // flight varies with timing, and a later high-water mark must not allocate. (A worker reserves
    // its own share too; this covers an aggregator's, and both on a colocated rank.)
    const std::size_t aborts = spec_.worker_peer.size() + spec_.aggregator_peer.size();
    resources_.outbound.reserve(aborts + (worker_ ? 2 * worker_->sends_bound() : 0) +
                                (aggregator_ ? aggregator_->sends_bound() + 1 : 0));
    resources_.inbound.reserve((worker_ ? 2 * worker_->fetches_bound() : 0) +
                               (aggregator_ ? aggregator_->pieces_bound() : 0));
}

void StreamingOperation::reserve_draining() {
    // The aborts: one to each other peer at most.
    const std::size_t aborts = spec_.worker_peer.size() + spec_.aggregator_peer.size();
    resources_.reserve_draining(
        aborts + (worker_ ? worker_->sends_bound() : 0) + (aggregator_ ? aggregator_->sends_bound() : 0),
        (worker_ ? worker_->fetches_bound() : 0) + (aggregator_ ? aggregator_->pieces_bound() : 0));
}

StreamingOperation::~StreamingOperation() {
    // Aborts the transport still holds keep their memory in the drain list.
    for (auto &m : aborts_)
        resources_.drain(std::move(m));
}

void StreamingOperation::on_message(InboundMessage &&message) {
    const WireHeader &h = message.header;
    if (h.kind == MessageKind::Abort) {
        if (!error_) {
            error_ = OpError{ErrorId::RemoteFailure, "rank " + std::to_string(h.sender) + " failed"};
            remote_ = true;
        }
        transport_.release(message);
        return;
    }
    const bool matches = h.context == spec_.context && h.seq == spec_.seq && h.count == spec_.layout.count &&
                         h.block_elems == spec_.layout.block_elems &&
                         h.elem_type == static_cast<std::uint8_t>(spec_.type) &&
                         h.reduce_op == static_cast<std::uint8_t>(spec_.op) &&
                         h.num_workers == static_cast<std::uint32_t>(spec_.workers());
    if (matches && h.kind == MessageKind::Contribution && aggregator_) {
        aggregator_->on_contribution(std::move(message));
    } else if (matches && h.kind == MessageKind::Result && worker_) {
        worker_->on_result(std::move(message));
    } else {
        fail({ErrorId::ProtocolViolation, "message does not match the operation (different arguments on some rank?)"});
        transport_.release(message);
    }
}

void StreamingOperation::fail(OpError error) {
    if (!error_) error_ = std::move(error);
}

const OpError &StreamingOperation::error() const {
    if (error_) return error_;
    if (worker_ && worker_->error()) return worker_->error();
    if (aggregator_ && aggregator_->error()) return aggregator_->error();
    return error_;
}

// Every other rank of the stream learns that this one failed. Sent once; a failure that came from a
// peer's Abort is not passed on (that peer told everyone).
void StreamingOperation::abort_peers() {
    aborts_sent_ = true;
    std::vector<int> peers = spec_.worker_peer;
    peers.insert(peers.end(), spec_.aggregator_peer.begin(), spec_.aggregator_peer.end());
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    for (int peer : peers) {
        if (peer == group_rank_) continue;
        auto m = resources_.outbound.get();
        m->header.kind = MessageKind::Abort;
        m->header.context = spec_.context;
        m->header.seq = spec_.seq;
        m->header.sender = static_cast<std::uint32_t>(group_rank_);
        transport_.send(peer, m->header, nullptr, 0, m->sent);
        aborts_.push_back(std::move(m));
    }
}

bool StreamingOperation::advance() {
    bool progressed = false;
    if (!error_) {
        if (worker_) progressed |= worker_->advance();
        // A rank whose worker just failed serves no more results: its peers must learn of the
        // failure (the Abort below), not complete on results sent after it.
        if (aggregator_ && !error()) progressed |= aggregator_->advance();
    }
    if (error() && !remote_ && !aborts_sent_) {
        abort_peers();
        progressed = true;
    }
    if (error() && worker_) fetches_settled_ = worker_->settle_fetches();
    return progressed;
}

bool StreamingOperation::done() const {
    if (error()) return (remote_ || aborts_sent_) && (!worker_ || fetches_settled_);
    return (!worker_ || worker_->done()) && (!aggregator_ || aggregator_->done());
}

std::string StreamingOperation::describe() const {
    std::string s = "operation " + std::to_string(spec_.seq) + ": ";
    if (worker_) s += worker_->describe() + " ";
    if (aggregator_) s += aggregator_->describe();
    return s;
}

}  // namespace mpix::sparse::detail
