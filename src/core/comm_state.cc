#include "core/comm_state.h"

#include "algo/message_queue.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/library.h"
#include "core/memory_ops.h"
#include "core/placement.h"

namespace mpix::sparse::detail {
namespace {

MPI_Comm private_duplicate(MPI_Comm comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    const int rc = MPI_Comm_dup(comm, &dup);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_dup");
    // The library's own calls report errors to the library, which raises them on the user's comm.
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    return dup;
}

}  // namespace

CommState::CommState(MPI_Comm comm, const Config &config) : config_(config) {
    internal_ = private_duplicate(comm);
    MPI_Comm_size(internal_, &size_);
    MPI_Comm_rank(internal_, &rank_);
    try {
        const int aggregators = config.aggregators == 0 ? size_ : config.aggregators;
        if (aggregators > size_) fail(ErrorId::InfoAggregators, "more aggregators than ranks");
        group_.size = size_;
        group_.rank = rank_;
        for (int r = 0; r < size_; ++r)
            group_.workers.push_back(r);
        // Node topology, only where something depends on it (collective, so decided from config).
        const bool need_nodes = (aggregators < size_ && size_ > 1) || config.hierarchical != Hierarchy::Off;
        const std::vector<int> node = need_nodes ? node_of_ranks(internal_) : std::vector<int>();
        group_.aggregators = aggregators == size_ || size_ == 1
                                 ? group_.workers
                                 : choose_aggregators(node, aggregators, config.placement);
        context_ = Library::get().agree_context(internal_);
        Library::get().register_sink(context_, this);
        if (config.hierarchical != Hierarchy::Off && size_ > 1) build_hierarchy(node);
    } catch (...) {
        if (context_ != 0) Library::get().unregister_sink(context_);
        MPI_Comm_free(&internal_);
        throw;
    }
}

// Hierarchy pays off when traffic crosses nodes and some node has several ranks whose data can be
// combined before it leaves: auto requires both; on forces it (on one node it is correct but only
// adds a broadcast).
void CommState::build_hierarchy(const std::vector<int> &node_of_rank) {
    const int nodes = 1 + *std::max_element(node_of_rank.begin(), node_of_rank.end());
    std::vector<int> per_node(static_cast<std::size_t>(nodes), 0);
    for (int n : node_of_rank)
        ++per_node[static_cast<std::size_t>(n)];
    const int max_per_node = *std::max_element(per_node.begin(), per_node.end());
    if (config_.hierarchical == Hierarchy::Auto && (nodes == 1 || max_per_node == 1)) return;
    auto h = std::make_unique<NodeHierarchy>();
    const int my_node = node_of_rank[static_cast<std::size_t>(rank_)];
    int rc = MPI_Comm_split(internal_, my_node, rank_, &h->node);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_split");
    int node_rank = 0;
    MPI_Comm_rank(h->node, &node_rank);
    rc = MPI_Comm_split(internal_, node_rank == 0 ? 0 : MPI_UNDEFINED, rank_, &h->leaders);
    if (rc != MPI_SUCCESS) {
        MPI_Comm_free(&h->node);
        throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_split");
    }
    Config level = config_;
    level.hierarchical = Hierarchy::Off;
    level.aggregators = 0;
    try {
        h->node_state = std::make_unique<CommState>(h->node, level);
        if (h->leaders != MPI_COMM_NULL) h->leader_state = std::make_unique<CommState>(h->leaders, level);
    } catch (...) {
        h->node_state.reset();
        MPI_Comm_free(&h->node);
        if (h->leaders != MPI_COMM_NULL) MPI_Comm_free(&h->leaders);
        throw;
    }
    hierarchy_ = std::move(h);
}

CommState::CommState(MPI_Comm comm, const Config &config, std::uint32_t context, Group group,
                     std::unique_ptr<Transport> links)
    : config_(config), group_(std::move(group)), context_(context), links_(std::move(links)) {
    internal_ = private_duplicate(comm);
    MPI_Comm_size(internal_, &size_);
    MPI_Comm_rank(internal_, &rank_);
    Library::get().register_sink(context_, this);
}

CommState::~CommState() {
    if (hierarchy_) {
        hierarchy_->leader_state.reset();
        hierarchy_->node_state.reset();
        if (hierarchy_->leaders != MPI_COMM_NULL) MPI_Comm_free(&hierarchy_->leaders);
        MPI_Comm_free(&hierarchy_->node);
    }
    try {
        say_goodbye();
        // Sends still awaiting acknowledgements: give them a bounded time, then leave their memory
        // behind rather than free it under the transport.
        if (links_) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            while (!resources_.reap() && std::chrono::steady_clock::now() < deadline)
                if (!links_->progress()) links_->wait();
        }
    } catch (...) {
        // Leaving anyway: aggregators may wait, but a destructor must not throw.
    }
    for (auto &m : resources_.draining)
        (void)m.release();
    for (auto &p : resources_.draining_pieces)
        (void)p.release();
    Library::get().unregister_sink(context_);
    for (InboundMessage &m : early_)
        links_ ? links_->release(m) : void();
    early_.clear();
    if (internal_ != MPI_COMM_NULL) MPI_Comm_free(&internal_);
}

std::uint64_t CommState::begin_call() {
    ++stats_.calls;
    return next_seq_++;
}

Transport &CommState::links() {
    if (!links_) links_ = Library::get().connect(internal_);
    return *links_;
}

// An operation is over for this rank when its results are in; but its own sends may still be read by
// peers (results sent straight from the output buffer) or wait for acknowledgements that a peer only
// sends while it progresses. A non-blocking barrier, progressed together with the transport, lets no
// rank return to the caller (and stop progressing) before every rank has its results.
void CommState::finish_together(Transport &transport) {
    MPI_Request barrier = MPI_REQUEST_NULL;
    int rc = MPI_Ibarrier(internal_, &barrier);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Ibarrier");
    int finished = 0;
    while (!finished) {
        const bool progressed = transport.progress();
        rc = MPI_Test(&barrier, &finished, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Test");
        if (!finished && !progressed) transport.wait();
    }
    resources_.reap();
}

void CommState::run_stream(const StreamSpec &spec, const ContributionSource *source, ResultSink *sink) {
    Transport &transport = links();
    resources_.reap();
    OpCounters counters;
    StreamingOperation op(spec, transport, resources_, counters, source, sink);
    active_ = &op;
    // Messages of this operation that arrived while this rank was still busy with earlier ones.
    deliver_queued(
        early_, [&](const InboundMessage &m) { return m.header.seq == spec.seq; },
        [&](InboundMessage &&m) { op.on_message(std::move(m)); });
    if (!protocol_error_.empty()) {
        op.fail(protocol_error_);
        protocol_error_.clear();
    }
    run_to_completion(op, transport);
    store_fence();  // results written with streaming stores are visible before anyone reads them
    finish_together(transport);
    active_ = nullptr;
    stats_.bytes_sent += static_cast<std::int64_t>(counters.bytes_sent);
    stats_.bytes_received += static_cast<std::int64_t>(counters.bytes_received);
    const std::string error = op.error();
    if (!error.empty()) {
        const bool transport_failure = error.find("failed") != std::string::npos;
        fail(transport_failure ? ErrorId::TransportFailure : ErrorId::ProtocolViolation, error);
    }
}

void CommState::on_message(InboundMessage &&message) {
    const WireHeader &h = message.header;
    if (const char *bad = check_header(h, sizeof(WireHeader))) {
        if (links_) links_->release(message);
        if (active_ != nullptr)
            active_->fail(std::string("malformed message: ") + bad);
        else if (protocol_error_.empty())
            protocol_error_ = std::string("malformed message: ") + bad;
        return;
    }
    if (active_ != nullptr && h.seq == active_->spec().seq) {
        active_->on_message(std::move(message));
    } else if (h.seq >= next_seq_ || (active_ != nullptr && h.seq > active_->spec().seq)) {
        early_.push_back(std::move(message));
    } else {
        // An operation this rank already finished: a peer is confused. Drop it.
        if (links_) links_->release(message);
    }
}

void CommState::say_goodbye() {
    if (!group_.dedicated || goodbye_sent_ || group_.my_worker() < 0) return;
    goodbye_sent_ = true;
    Transport &transport = links();
    std::vector<std::unique_ptr<OutboundMessage>> messages;
    for (std::size_t a = 0; a < group_.aggregators.size(); ++a) {
        auto m = std::make_unique<OutboundMessage>();
        m->header.kind = MessageKind::Goodbye;
        m->header.context = context_;
        m->header.sender = static_cast<std::uint32_t>(group_.my_worker());
        m->header.seq = next_seq_;
        transport.send(group_.aggregators[a], m->header, nullptr, 0, m->sent);
        messages.push_back(std::move(m));
    }
    for (auto &m : messages) {
        while (!m->sent.done()) {
            if (!transport.progress()) transport.wait();
        }
    }
}

}  // namespace mpix::sparse::detail
