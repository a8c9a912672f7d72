#include "algo/dedicated_aggregator.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <new>

#include "core/comm_state.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/library.h"
#include "core/node_layout.h"
#include "core/placement.h"
#include "core/result_fanout.h"

namespace mpix::sparse::detail {
MPI_Comm create_dedicated(MPI_Comm comm, const Config &config) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (size < 2) fail(ErrorId::InfoTooFewRanks);
    const int aggregators = config.aggregators == 0 ? 1 : config.aggregators;
    if (aggregators >= size) fail(ErrorId::InfoAggregators, "dedicated mode needs at least one worker");

    Library &library = Library::get();
    MPI_Comm parent = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(comm, &parent);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    struct FreeOnExit {
        MPI_Comm &c;
        ~FreeOnExit() {
            if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
        }
    } free_parent{parent};

    Group group;
    group.size = size;
    group.rank = rank;
    group.dedicated = true;
    const std::vector<int> node = learn_node_layout(parent).node_of_rank;
    group.aggregators = choose_aggregators(node, aggregators, config.placement);
    for (int r = 0; r < size; ++r)
        if (std::find(group.aggregators.begin(), group.aggregators.end(), r) == group.aggregators.end())
            group.workers.push_back(r);
    const bool multicast = plan_node_multicast(group, node, config.node_multicast, parent);
    const bool is_aggregator = group.my_aggregator() >= 0;

    // The aggregator's service exists before the context is agreed: workers may stream to it as soon
    // as the agreement completes. Workers receive nothing before they stream, so their state is
    // registered after its communicator exists.
    std::unique_ptr<DedicatedAggregator> service;
    if (is_aggregator) service = std::make_unique<DedicatedAggregator>(config, group);
    const std::uint32_t context = library.agree_context(parent, service.get());
    std::unique_ptr<Transport> links;
    MPI_Comm workers = MPI_COMM_NULL;
    try {
        // Aggregators get no shared segment: their operations end without a barrier among all ranks,
        // which is what tells a sender that its segment may be reused. Workers do (they end each
        // operation with a barrier among the workers, the only ranks that read a worker's segment):
        // results forwarded within a node go through it.
        links = library.connect(parent, context, is_aggregator ? 0 : config.shared_memory_bytes,
                                config.fail_at == FailPoint::Connect);
        rc = MPI_Comm_split(comm, is_aggregator ? 1 : 0, rank, &workers);
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_split");
    } catch (...) {
        library.unregister_sink(context);
        throw;
    }

    if (!is_aggregator) {
        try {
            Config agreed = config;
            agreed.node_multicast = multicast;
            std::vector<int> worker_nodes;  // in the workers communicator's rank order (split by parent rank)
            for (int w : group.workers)
                worker_nodes.push_back(node[static_cast<std::size_t>(w)]);
            auto state = std::make_unique<CommState>(workers, agreed, context, std::move(group), std::move(links));
            // Nodes known (a blocking call's dense path depends on them); no link probe, as before.
            state->learn_nodes(worker_nodes);
            state->set_created_by_comm_create();
            library.register_sink(context, state.get());
            library.attach(workers, std::move(state));
        } catch (...) {
            library.unregister_sink(context);
            MPI_Comm_free(&workers);
            throw;
        }
        return workers;
    }
    MPI_Comm_free(&workers);
    try {
        {
            std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
            service->set_links(context, links.get());
            library.add_busy(service.get());
        }
        library.wait_until([&] { return service->finished(); });
    } catch (...) {
        // Nothing may keep a pointer to the service (busy list, sinks), nor the service to the links,
        // once they are gone; without the bounded wait below, what the transport may still touch is
        // left behind.
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        library.remove_busy(service.get());
        library.unregister_sink(context);
        service->abandon();
        service.reset();
        links.reset();
        throw;
    }
    {
        // Nothing more reaches it: late messages for the context are dropped from here on.
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        library.remove_busy(service.get());
        library.unregister_sink(context);
    }
    // Result sends whose acknowledgements are still on their way: a bounded wait, then their memory
    // is left behind rather than freed under the transport.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    library.wait_until([&] { return service->settle() || std::chrono::steady_clock::now() > deadline; });
    // The service goes before the links it releases messages through, under the engine lock.
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    service->abandon();
    service.reset();
    links.reset();
    return MPI_COMM_NULL;
}

DedicatedAggregator::DedicatedAggregator(const Config &config, Group group)
    : config_(config), group_(std::move(group)), said_goodbye_(group_.workers.size(), false) {}

DedicatedAggregator::~DedicatedAggregator() {
    op_.reset();
    if (links_ != nullptr)
        for (InboundMessage &m : queued_)
            links_->release(m);
}

void DedicatedAggregator::set_links(std::uint32_t context, Transport *links) {
    context_ = context;
    links_ = links;
}

void DedicatedAggregator::on_message(InboundMessage &&message) {
    // Runs inside the transport's callback: nothing may escape.
    try {
        const WireHeader &h = message.header;
        if (const char *bad = check_header(h, sizeof(WireHeader))) {
            if (debug_enabled())
                std::cerr << "mpix_sparse: dedicated aggregator dropped a malformed message: " << bad << '\n';
            // It fails the operation it names: the one served, or a later one when it starts here
            // (its other workers' contributions start it). One that ended here is left alone.
            OpError error{ErrorId::ProtocolViolation, std::string("malformed message: ") + bad};
            if (serving_ && h.seq == spec_.seq) {
                op_->fail(std::move(error));
            } else if (h.seq >= next_seq_) {
                named_failure_.hold(h.seq, std::move(error));
            }
            links_->release(message);
            return;
        }
        if (h.kind == MessageKind::Stalled) {
            links_->release(message);  // a worker's timeout notice: it names ranks for the workers only
            return;
        }
        if (h.kind == MessageKind::Goodbye) {
            if (h.sender < said_goodbye_.size() && !said_goodbye_[h.sender]) {
                said_goodbye_[h.sender] = true;
                ++goodbyes_;
            }
            links_->release(message);
            return;
        }
        if (serving_ && h.seq == spec_.seq) {
            op_->on_message(std::move(message));
        } else if (h.seq >= next_seq_ && queued_.size() < CommState::kMaxEarlyMessages) {
            // No bound on how far ahead: calls that went dense never reach this aggregator.
            queued_.push_back(std::move(message));
        } else {
            // An operation already finished here, or a flood: nothing to wait for.
            links_->release(message);
        }
    } catch (...) {
        if (serving_) op_->fail({ErrorId::OutOfMemory, "queueing a message"});
        links_->release(message);
    }
}

// Starts the oldest operation with queued messages: its first contribution says what the workers
// agreed on (the vector, type, op and this aggregator's shard). Sequence numbers of calls that never
// streamed here (dense ones) are skipped; an operation a worker aborted before anything reached this
// aggregator is dropped.
bool DedicatedAggregator::start_next() {
    if (queued_.empty()) return false;
    std::uint64_t seq = queued_.front().header.seq;
    for (const InboundMessage &m : queued_)
        seq = std::min(seq, m.header.seq);
    auto first = std::find_if(queued_.begin(), queued_.end(), [&](const InboundMessage &m) {
        return m.header.seq == seq && m.header.kind == MessageKind::Contribution;
    });
    if (first == queued_.end()) {
        drop_queued(seq);
        next_seq_ = seq + 1;
        return true;
    }
    const WireHeader &h = first->header;
    const int me = group_.my_aggregator();
    const auto type = static_cast<ElementType>(h.elem_type);
    const auto op = static_cast<ReduceOp>(h.reduce_op);
    const BlockLayout layout{h.count, h.block_elems, static_cast<std::uint32_t>(element_size(type))};
    // The same vector, type and op as the operation before (a training or solver loop): its stream is
    // restarted, with its containers and reducer, so that serving it allocates nothing. Else a new
    // one is made (the reducer and the kernels are chosen for one vector, type and op).
    if (op_ && !(spec_.type == type && spec_.op == op && spec_.layout.count == layout.count &&
                 spec_.layout.block_elems == layout.block_elems))
        op_.reset();
    // The operation's number first: a failure while setting it up fails this one (fail_current).
    // Every field of spec_ is set here; its vectors keep their memory.
    spec_.seq = seq;
    next_seq_ = seq + 1;
    setting_up_ = true;
    spec_.context = context_;
    spec_.type = type;
    spec_.op = op;
    spec_.layout = layout;
    spec_.worker_peer = group_.workers;
    spec_.aggregator_peer = group_.aggregators;
    spec_.shard_bounds.assign(group_.aggregators.size() + 1, 0);
    spec_.shard_bounds[static_cast<std::size_t>(me)] = h.shard_lo;
    spec_.shard_bounds[static_cast<std::size_t>(me) + 1] = h.shard_hi;
    spec_.my_worker = -1;
    spec_.my_aggregator = me;
    spec_.fanout = &group_.fanout;
    spec_.message_bytes = config_.message_bytes;
    spec_.window = config_.window;
    spec_.fail_at = config_.fail_at;
    if (op_)
        op_->restart();
    else
        op_.emplace(spec_, *links_, resources_, counters_, nullptr, nullptr, group_.rank);
    setting_up_ = false;
    serving_ = true;
    if (OpError named = named_failure_.take_for(seq)) op_->fail(std::move(named));
    for (auto it = queued_.begin(); it != queued_.end();) {
        if (it->header.seq == seq) {
            op_->on_message(std::move(*it));
            it = queued_.erase(it);
        } else {
            ++it;
        }
    }
    return true;
}

void DedicatedAggregator::finish_op() {
    if (op_->error() && debug_enabled())
        std::cerr << "mpix_sparse: dedicated aggregator: operation " << spec_.seq << ": " << op_->error().detail
                  << '\n';
    // Kept for the next operation of its shape, holding nothing: its sends drain (and are reaped,
    // or awaited when the service ends) as a destroyed operation's did.
    op_->park();
    serving_ = false;
}

void DedicatedAggregator::drop_queued(std::uint64_t seq) {
    for (auto it = queued_.begin(); it != queued_.end();) {
        if (it->header.seq == seq) {
            links_->release(*it);
            it = queued_.erase(it);
        } else {
            ++it;
        }
    }
}

// The operation being served fails, as CommState fails its operations: its stream tells the workers.
// One that failed while being set up has no stream: they are told here. Its messages still queued
// (those after one a step threw on) are dropped, or the next start would take them for a new call.
void DedicatedAggregator::fail_current(OpError error) {
    const bool setting_up = setting_up_;
    setting_up_ = false;
    if (serving_)
        op_->fail(std::move(error));  // finish_op reports it
    else if (setting_up)
        op_.reset();  // a restart that threw: made anew next time
    if (serving_ || setting_up) drop_queued(spec_.seq);
    if (!setting_up) return;
    if (debug_enabled())
        std::cerr << "mpix_sparse: dedicated aggregator: operation " << spec_.seq << ": " << error.detail << '\n';
    try {
        for (int peer : group_.workers) {
            auto m = resources_.outbound.get();
            m->header.kind = MessageKind::Abort;
            m->header.context = context_;
            m->header.seq = spec_.seq;
            m->header.sender = static_cast<std::uint32_t>(group_.rank);
            links_->send(peer, m->header, nullptr, 0, m->sent);
            resources_.drain(std::move(m));
        }
    } catch (...) {
        // Out of memory even for that: the workers learn of it by their timeout.
    }
}

// Nothing may escape to the progress engine (a progress thread would terminate, and create_dedicated
// would be left waiting): a failure fails the operation being served and the service goes on.
bool DedicatedAggregator::progress() {
    if (links_ == nullptr) return false;
    try {
        return serve();
    } catch (const Error &e) {
        fail_current({e.id(), e.detail()});
    } catch (const std::bad_alloc &) {
        fail_current({ErrorId::OutOfMemory, "serving an operation"});
    }
    return true;
}

bool DedicatedAggregator::serve() {
    bool progressed = false;
    resources_.reap();
    if (!serving_) progressed |= start_next();
    if (serving_) {
        progressed |= op_->advance();
        if (op_->done()) {
            finish_op();
            progressed = true;
        }
    }
    return progressed;
}

bool DedicatedAggregator::finished() const {
    return !serving_ && goodbyes_ == static_cast<int>(group_.workers.size()) && queued_.empty();
}

}  // namespace mpix::sparse::detail
