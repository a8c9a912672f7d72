#include "core/comm_state.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>
#include <sstream>
#include <string>
#include <utility>

#include "core/debug.h"
#include "core/env_switch.h"
#include "core/error.h"
#include "core/library.h"
#include "core/placement.h"
#include "core/result_fanout.h"

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

// How long teardown waits for sends still awaiting acknowledgements before leaving their memory
// behind rather than freeing it under the transport.
constexpr std::chrono::seconds kTeardownGrace{2};

// The watchdog. A gap this long between two progress steps means nobody was waiting (the
// application computed with a request pending): that time does not count as a stall.
constexpr std::chrono::milliseconds kUnwatchedGap{1000};
// After this long without progress, the peers' liveness is checked (cheap: a kill(pid, 0) per peer
// on this machine, a flag per endpoint elsewhere), and again at this interval.
constexpr std::chrono::milliseconds kLivenessInterval{500};

std::string rank_list(const std::vector<int> &ranks) {
    std::string s;
    for (int r : ranks)
        s += (s.empty() ? "" : ", ") + std::to_string(r);
    return s;
}

}  // namespace

struct CommState::Notices {
    std::vector<WireHeader> headers;
    std::vector<Completion> sent;
    bool settled() const {
        return std::all_of(sent.begin(), sent.end(), [](const Completion &c) { return c.done(); });
    }
};

CommState::CommState(MPI_Comm comm, const Config &config) : config_(config) {
    internal_ = private_duplicate(comm);
    MPI_Comm_size(internal_, &size_);
    MPI_Comm_rank(internal_, &rank_);
    reserve_queues();
    try {
        const int aggregators = config.aggregators == 0 ? size_ : config.aggregators;
        if (aggregators > size_) fail(ErrorId::InfoAggregators, "more aggregators than ranks");
        group_.size = size_;
        group_.rank = rank_;
        for (int r = 0; r < size_; ++r)
            group_.workers.push_back(r);
        // Node topology: aggregator placement, hierarchy, and what crossing nodes costs the planner.
        const NodeLayout layout = size_ > 1 ? learn_node_layout(internal_) : NodeLayout();
        const std::vector<int> &node = layout.node_of_rank;
        learn_network(layout);
        group_.aggregators = aggregators == size_ || size_ == 1
                                 ? group_.workers
                                 : choose_aggregators(node, aggregators, config.placement);
        config_.node_multicast = plan_node_multicast(group_, node, config_.node_multicast, internal_);
        context_ = Library::get().agree_context(internal_, this);
        if (size_ > 1)
            links_ = Library::get().connect(internal_, context_, config.shared_memory_bytes,
                                            config.fail_at == FailPoint::Connect);
        if (config.hierarchical != Hierarchy::Off && size_ > 1) build_hierarchy(node);
    } catch (...) {
        if (context_ != 0) Library::get().unregister_sink(context_);
        {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            for (InboundMessage &m : early_)
                release(m);
            early_.clear();
        }
        MPI_Comm_free(&internal_);
        throw;
    }
}

void CommState::learn_nodes(const std::vector<int> &node_of_rank) {
    if (node_of_rank.empty()) return;
    // Node numbers may skip values (a subset of a larger communicator's nodes): count distinct ones.
    std::vector<int> per_node(static_cast<std::size_t>(1 + *std::max_element(node_of_rank.begin(), node_of_rank.end())),
                              0);
    for (int n : node_of_rank)
        ++per_node[static_cast<std::size_t>(n)];
    nodes_ = static_cast<int>(std::count_if(per_node.begin(), per_node.end(), [](int k) { return k > 0; }));
    ranks_per_node_ = *std::max_element(per_node.begin(), per_node.end());
}

// Nodes and the most ranks on one; across nodes, the link's cost per byte unless configured (a
// hierarchy level inherits its parent's). Every rank gets the same values (the probe agrees on them).
void CommState::learn_network(const NodeLayout &layout) {
    if (layout.node_of_rank.empty()) return;
    learn_nodes(layout.node_of_rank);
    cores_shared_ = layout.cores_shared;
    if (nodes_ > 1 && config_.cost.link_ns <= 0)
        config_.cost.link_ns = Library::get().link_costs().link_ns(internal_, layout.node_of_rank);
    if ((nodes_ > 1 || cores_shared_) && debug_enabled() && rank_ == 0)
        std::fprintf(stderr,
                     "mpix_sparse: %d ranks on %d nodes (at most %d on one%s): %.3f ns per byte between nodes\n", size_,
                     nodes_, ranks_per_node_, cores_shared_ ? ", sharing cores" : "", config_.cost.link_ns);
}

// Hierarchy pays off when traffic crosses nodes and some node has several ranks whose data can be
// combined before it leaves: auto requires both, and node multicast off; on forces it (on one node it
// is correct but only adds a broadcast).
void CommState::build_hierarchy(const std::vector<int> &node_of_rank) {
    // With node multicast the flat communicator already sends each result across a node boundary
    // once, and it measured faster than the levels at 1% and, choosing dense, at 100% (where the
    // levels lost to MPI_Allreduce): auto leaves it flat (docs/performance.md, "Node multicast").
    if (config_.hierarchical == Hierarchy::Auto && (nodes_ == 1 || ranks_per_node_ == 1 || config_.node_multicast))
        return;
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
        h->node_state->parent_ = this;
        if (h->leaders != MPI_COMM_NULL) {
            h->leader_state = std::make_unique<CommState>(h->leaders, level);
            h->leader_state->parent_ = this;
        }
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
    reserve_queues();
}

namespace {

// MPIX_SPARSE_REPORT=1: each rank prints what the library did on a communicator when it is freed or
// at MPI_Finalize (so runs of unmodified programs under the interposer show it).
void report_statistics(const CommState &state, const CommStats &stats, const PhaseProfile &profile) {
    static const bool wanted = env_is("MPIX_SPARSE_REPORT", "1");
    if (!wanted || stats.calls == 0) return;
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    std::fprintf(stderr,
                 "mpix_sparse report: world rank %d, communicator context %u (%d ranks): %lld calls, %lld dense, "
                 "%lld bytes sent, %lld bytes received\n",
                 world_rank, state.context(), state.size(), static_cast<long long>(stats.calls),
                 static_cast<long long>(stats.dense_fallbacks), static_cast<long long>(stats.bytes_sent),
                 static_cast<long long>(stats.bytes_received));
    if (profile.calls == 0) return;
    static const char *const names[kPhases] = {"scan",   "agreement", "dense",   "allgather",     "stream",
                                               "reduce", "result",    "barrier", "node broadcast"};
    std::string line;
    for (std::size_t i = 0; i < kPhases; ++i) {
        if (profile.ns[i] == 0) continue;
        char part[64];
        std::snprintf(part, sizeof part, ", %s %.3f", names[i],
                      static_cast<double>(profile.ns[i]) * 1e-6 / static_cast<double>(profile.calls));
        line += part;
    }
    std::fprintf(stderr, "mpix_sparse profile: world rank %d, context %u: %lld calls, ms per call%s\n", world_rank,
                 state.context(), static_cast<long long>(profile.calls), line.c_str());
}

}  // namespace

CommState::~CommState() {
    Library &library = Library::get();
    if (parent_ == nullptr) report_statistics(*this, stats_, profile_);  // levels of a hierarchy count in their parent
    // Freeing a communicator with operations in flight: MPI lets them complete first.
    library.wait_until([this] { return queue_.empty(); });
    {
        // Requests on it stay valid handles: their operations go now, while this state is whole.
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        for (StateObserver *observer : std::exchange(observers_, {}))
            observer->state_closing();
        dispose(std::move(spare_operation_));
    }
    if (hierarchy_) {
        hierarchy_->leader_state.reset();
        hierarchy_->node_state.reset();
        if (hierarchy_->leaders != MPI_COMM_NULL) MPI_Comm_free(&hierarchy_->leaders);
        MPI_Comm_free(&hierarchy_->node);
    }
    try {
        say_goodbye();
        // Sends still awaiting acknowledgements: a bounded wait, then their memory is left behind.
        const auto deadline = std::chrono::steady_clock::now() + kTeardownGrace;
        library.wait_until([&] { return settle_lingering() || std::chrono::steady_clock::now() > deadline; });
    } catch (...) {
        // Leaving anyway: aggregators may wait, but a destructor must not throw.
    }
    library.unregister_sink(context_);
    {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        library.remove_busy(this);
        if (notices_ && !notices_->settled()) library.park(notices_);
        for (auto &s : lingering_)
            s->abandon();
        for (InboundMessage &m : early_)
            release(m);
        early_.clear();
        // The transport's teardown forgets peer segments and reads its sends' counts, which UCX's
        // callbacks change under this lock on whichever thread progresses (another call, the
        // progress thread): it goes here, not with the members after the lock is released.
        links_.reset();
    }
    if (internal_ != MPI_COMM_NULL) MPI_Comm_free(&internal_);
}

// Early messages of one operation are bounded by the peers' credits (window per peer and shard); a
// few operations in line. Reserved up front so that steady-state calls allocate nothing.
void CommState::reserve_queues() {
    early_.reserve(static_cast<std::size_t>(4 * (config_.window + 1)) *
                   static_cast<std::size_t>(std::max(size_, group_.size)));
    queue_.reserve(32);
}

Transport &CommState::links() {
    if (!links_) fail(ErrorId::MpiFailure, "a one-rank communicator has no links");
    return *links_;
}

void CommState::release(InboundMessage &message) {
    if (links_) links_->release(message);
}

void CommState::start(Operation &op) {
    ++stats_.calls;
    op.set_seq(next_seq_++);
    op.set_retired(false);
    if (broken_) {
        // Nothing runs on a broken communicator: the call fails at once, with what broke it.
        op.fail(OpError{broken_.id, "the communicator broke earlier: " + broken_.detail});
        op.set_retired(true);
        return;
    }
    queue_.push_back(&op);
    Library::get().add_busy(this);
}

bool CommState::withdraw(Operation &op) {
    // Only an operation that never ran may leave the line early (its caller failed before waiting).
    auto it = std::find(queue_.begin(), queue_.end(), &op);
    if (it == queue_.end()) return true;
    if (it == queue_.begin() && front_active_) return false;
    queue_.erase(it);
    return true;
}

void CommState::fail_running(OpError error) {
    if (!queue_.empty() && front_active_)
        queue_.front()->fail(std::move(error));
    else if (!pending_error_)
        pending_error_ = std::move(error);
}

void CommState::fail_named(std::uint64_t seq, OpError error) {
    const bool running = !queue_.empty() && front_active_;
    if (running && seq == queue_.front()->seq()) {
        queue_.front()->fail(std::move(error));
        return;
    }
    const std::uint64_t oldest = queue_.empty() ? next_seq_ : queue_.front()->seq();
    if (seq < oldest) return;  // an operation that ended here: its peers learned how it ended
    if (seq < next_seq_ + kMaxAhead && named_failure_.hold(seq, error)) return;  // until it becomes active
    fail_running(std::move(error));  // names no operation this rank can reach: the header lies
}

void CommState::activate_front() {
    Operation &op = *queue_.front();
    front_active_ = true;
    last_moved_ = last_polled_ = Clock::now();
    notices_sent_ = false;
    if (stalled_seq_ != op.seq()) stalled_peers_.clear();
    try {
        op.activate();
    } catch (const Error &e) {
        op.fail({e.id(), e.detail()});
    } catch (const std::bad_alloc &) {
        op.fail({ErrorId::OutOfMemory, "activating an operation"});
    }
    // Messages of this operation that arrived while this rank was still busy with earlier ones. The
    // operation owns each from the hand-over; one that a step throws on fails it, as a message taken
    // on arrival does (on_message), and the rest still go to it: nothing escapes to the progress loop.
    for (auto it = early_.begin(); it != early_.end();) {
        if (it->header.seq != op.seq()) {
            ++it;
            continue;
        }
        InboundMessage message = std::move(*it);
        it = early_.erase(it);
        try {
            op.on_message(std::move(message));
        } catch (const Error &e) {
            op.fail({e.id(), e.detail()});
        } catch (const std::bad_alloc &) {
            op.fail({ErrorId::OutOfMemory, "taking a message that came early"});
        }
        release(message);  // still here only when the step threw before taking it
    }
    if (pending_error_) {
        op.fail(std::move(pending_error_));
        pending_error_ = OpError{};
    }
    if (OpError named = named_failure_.take_for(op.seq())) op.fail(std::move(named));
}

bool CommState::progress() {
    settle_lingering();
    bool moved = false;
    while (!queue_.empty()) {
        if (!front_active_) {
            activate_front();
            moved = true;
            if (broken_) return true;  // the operation broke the communicator (it could not join a stage)
        }
        Operation &op = *queue_.front();
        bool stepped = false;
        try {
            stepped = op.progress();
        } catch (const Error &e) {
            op.fail({e.id(), e.detail()});
        } catch (const std::bad_alloc &) {
            op.fail({ErrorId::OutOfMemory, "advancing an operation"});
        }
        if (broken_) return true;  // as above: the line is empty now
        moved |= stepped;
        if (!op.done()) {
            watch(stepped);
            if (broken_) return true;
            break;
        }
        queue_.erase(queue_.begin());
        front_active_ = false;
        op.set_retired(true);
        moved = true;
    }
    if (queue_.empty()) Library::get().remove_busy(this);
    return moved;
}

void CommState::on_message(InboundMessage &&message) {
    // Runs inside the transport's callback: nothing may escape.
    try {
        const WireHeader &h = message.header;
        if (broken_) {
            release(message);  // nothing runs here any more
            return;
        }
        if (const char *bad = check_header(h, sizeof(WireHeader))) {
            release(message);
            fail_named(h.seq, {ErrorId::ProtocolViolation, std::string("malformed message: ") + bad});
            return;
        }
        if (h.kind == MessageKind::Goodbye) {
            release(message);  // only dedicated aggregators expect goodbyes
            return;
        }
        if (h.kind == MessageKind::Stalled) {
            // A peer waits in operation seq past its timeout: it is not the one holding it up.
            const auto sender = static_cast<int>(h.sender);
            if (h.seq != stalled_seq_) {
                stalled_seq_ = h.seq;
                stalled_peers_.clear();
            }
            if (sender >= 0 && sender < group_.size &&
                std::find(stalled_peers_.begin(), stalled_peers_.end(), sender) == stalled_peers_.end())
                stalled_peers_.push_back(sender);
            release(message);
            return;
        }
        if (!queue_.empty() && front_active_ && h.seq == queue_.front()->seq()) {
            front_moved_ = true;
            queue_.front()->on_message(std::move(message));
            return;
        }
        const std::uint64_t oldest = queue_.empty() ? next_seq_ : queue_.front()->seq();
        if (h.seq < oldest) {
            release(message);  // an operation that ended here (its peers learned of it): stale
            return;
        }
        if (h.seq >= next_seq_ + kMaxAhead || early_.size() >= kMaxEarlyMessages) {
            release(message);
            fail_running({ErrorId::ProtocolViolation, "a peer sent messages for an operation too far ahead"});
            return;
        }
        early_.push_back(std::move(message));
    } catch (const std::bad_alloc &) {
        release(message);
        fail_running({ErrorId::OutOfMemory, "queueing a message"});
    } catch (const Error &e) {
        release(message);
        fail_running({e.id(), e.detail()});
    }
}

std::unique_ptr<Reusable> CommState::take_scratch() {
    settle_lingering();
    if (spare_.empty()) return nullptr;
    std::unique_ptr<Reusable> s = std::move(spare_.back());
    spare_.pop_back();
    return s;
}

void CommState::give_back(std::unique_ptr<Reusable> scratch) {
    if (!scratch) return;
    if (scratch->settle())
        spare_.push_back(std::move(scratch));
    else
        lingering_.push_back(std::move(scratch));
}

bool CommState::settle_lingering() {
    for (auto it = lingering_.begin(); it != lingering_.end();) {
        if ((*it)->settle()) {
            spare_.push_back(std::move(*it));
            it = lingering_.erase(it);
        } else {
            ++it;
        }
    }
    return lingering_.empty();
}

void CommState::watch(bool moved) {
    const Clock::time_point now = Clock::now();
    if (now - last_polled_ > kUnwatchedGap) last_moved_ = now;  // nobody waited in between
    last_polled_ = now;
    if (moved || front_moved_) {
        front_moved_ = false;
        last_moved_ = now;
        notices_sent_ = false;
        return;
    }
    const auto idle = now - last_moved_;
    if (idle >= kLivenessInterval && now - last_liveness_check_ >= kLivenessInterval && links_) {
        last_liveness_check_ = now;
        if (const int gone = links_->unreachable_peer(); gone >= 0) {
            break_state({ErrorId::PeerGone, "rank " + std::to_string(gone) + " of the communicator's group is gone (" +
                                                links_->describe_peer(gone) + ") while this rank waited in " +
                                                queue_.front()->describe()});
            return;
        }
    }
    if (config_.timeout_s <= 0) return;
    const auto timeout = std::chrono::duration<double>(config_.timeout_s);
    if (idle < timeout) return;
    if (!notices_sent_) {
        // Tell the peers, then give theirs a moment to arrive: ranks that wait in this operation too
        // are not the ones holding it up.
        send_stalled_notices();
        notices_sent_ = true;
        const auto grace = std::min<Clock::duration>(std::chrono::seconds(1),
                                                     std::chrono::duration_cast<Clock::duration>(timeout / 4));
        grace_end_ = now + std::max<Clock::duration>(grace, std::chrono::milliseconds(100));
        return;
    }
    if (now < grace_end_) return;
    const std::string report = stall_report();
    if (debug_enabled()) std::fprintf(stderr, "mpix_sparse: context %u: %s\n", context_, report.c_str());
    break_state({ErrorId::Timeout, report});
}

void CommState::send_stalled_notices() {
    if (!links_ || queue_.empty()) return;
    const std::uint64_t seq = queue_.front()->seq();
    if (stalled_seq_ != seq) {
        stalled_seq_ = seq;
        stalled_peers_.clear();
    }
    send_notices(MessageKind::Stalled, seq);
}

bool CommState::abort_to_peers(std::uint64_t seq) {
    if (!links_) return false;
    try {
        send_notices(MessageKind::Abort, seq);
        return true;
    } catch (const std::bad_alloc &) {
        return false;
    } catch (const Error &) {
        return false;
    }
}

void CommState::send_notices(MessageKind kind, std::uint64_t seq) {
    // Everything that may allocate comes first: the transport holds the headers and completions from
    // the first send on, so they are kept (in notices_) before it.
    auto notices = std::make_shared<Notices>();
    notices->headers.resize(static_cast<std::size_t>(group_.size));
    notices->sent.resize(static_cast<std::size_t>(group_.size));
    if (notices_ && !notices_->settled()) Library::get().park(notices_);
    notices_ = notices;
    for (int peer = 0; peer < group_.size; ++peer) {
        if (peer == group_.rank) continue;
        WireHeader &h = notices->headers[static_cast<std::size_t>(peer)];
        h.kind = kind;
        h.context = context_;
        h.seq = seq;
        h.sender = static_cast<std::uint32_t>(group_.rank);
        links_->send(peer, h, nullptr, 0, notices->sent[static_cast<std::size_t>(peer)]);
    }
}

std::string CommState::stall_report() const {
    std::vector<int> silent, waiting;
    for (int peer = 0; peer < group_.size; ++peer) {
        if (peer == group_.rank) continue;
        const bool heard = std::find(stalled_peers_.begin(), stalled_peers_.end(), peer) != stalled_peers_.end();
        (heard ? waiting : silent).push_back(peer);
    }
    // The names first: the operation's own description can be long (the error string is bounded).
    std::ostringstream s;
    if (!silent.empty())
        s << "waiting for rank(s) " << rank_list(silent) << " (no word from them: stalled, gone, or not in this call)";
    else
        s << "every peer is waiting too";
    if (!waiting.empty()) s << "; rank(s) " << rank_list(waiting) << " wait in it too";
    s << "; no progress for " << config_.timeout_s << " s in " << queue_.front()->describe();
    return s.str();
}

void CommState::break_state(const OpError &error) {
    if (broken_) return;
    broken_ = error;
    if (debug_enabled())
        std::fprintf(stderr, "mpix_sparse: context %u is broken: %s\n", context_, error.detail.c_str());
    // The running operation may have MPI requests and transfers outstanding: abandoned (its owner
    // parks it). Those still in line never started anything: they just fail.
    for (std::size_t i = 0; i < queue_.size(); ++i) {
        Operation &op = *queue_[i];
        if (i == 0 && front_active_)
            op.abandon(error);
        else
            op.fail(error);
        op.set_retired(true);
    }
    queue_.clear();
    front_active_ = false;
    for (InboundMessage &m : early_)
        release(m);
    early_.clear();
    Library::get().remove_busy(this);
    if (notices_ && !notices_->settled()) Library::get().park(notices_);
    notices_.reset();
    // The levels of a hierarchy and the communicator they serve stand or fall together.
    if (hierarchy_) {
        if (hierarchy_->node_state) hierarchy_->node_state->break_state(error);
        if (hierarchy_->leader_state) hierarchy_->leader_state->break_state(error);
    }
    if (parent_ != nullptr) parent_->break_state(error);
}

void CommState::keep_spare_operation(std::unique_ptr<Operation> op) {
    dispose(std::move(spare_operation_));
    if (broken_)
        dispose(std::move(op));  // nothing runs here any more
    else
        spare_operation_ = std::move(op);
}

void CommState::unwatch(StateObserver *observer) {
    observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
}

void CommState::say_goodbye() {
    // Also on a broken communicator, as best it can: its aggregators wait for every worker's goodbye.
    if (!group_.dedicated || goodbye_sent_ || group_.my_worker() < 0) return;
    goodbye_sent_ = true;
    struct Farewells {  // what the transport refers to until the sends complete
        std::vector<std::unique_ptr<WireHeader>> headers;
        std::vector<std::unique_ptr<Completion>> sent;
        bool done() const {
            return std::all_of(sent.begin(), sent.end(), [](const auto &c) { return c->done(); });
        }
    };
    auto farewells = std::make_shared<Farewells>();
    Library &library = Library::get();
    try {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        Transport &transport = links();
        for (std::size_t a = 0; a < group_.aggregators.size(); ++a) {
            auto h = std::make_unique<WireHeader>();
            h->kind = MessageKind::Goodbye;
            h->context = context_;
            h->sender = static_cast<std::uint32_t>(group_.my_worker());
            h->seq = next_seq_;
            farewells->sent.push_back(std::make_unique<Completion>());
            farewells->headers.push_back(std::move(h));
            transport.send(group_.aggregators[a], *farewells->headers.back(), nullptr, 0, *farewells->sent.back());
        }
    } catch (...) {
        library.park(farewells);
        throw;
    }
    // Bounded: an aggregator that is gone (or a broken link) must not keep this rank here.
    const auto deadline = std::chrono::steady_clock::now() + kTeardownGrace;
    library.wait_until([&] { return farewells->done() || std::chrono::steady_clock::now() > deadline; });
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    if (!farewells->done()) library.park(farewells);
}

}  // namespace mpix::sparse::detail
