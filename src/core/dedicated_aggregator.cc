#include "core/dedicated_aggregator.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "algo/message_queue.h"
#include "core/comm_state.h"
#include "core/error.h"
#include "core/library.h"
#include "core/placement.h"

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
    group.aggregators = choose_aggregators(node_of_ranks(parent), aggregators, config.placement);
    for (int r = 0; r < size; ++r)
        if (std::find(group.aggregators.begin(), group.aggregators.end(), r) == group.aggregators.end())
            group.workers.push_back(r);
    const bool is_aggregator = group.my_aggregator() >= 0;

    const std::uint32_t context = library.agree_context(parent);
    std::unique_ptr<Transport> links = library.connect(parent);
    MPI_Comm workers = MPI_COMM_NULL;
    rc = MPI_Comm_split(comm, is_aggregator ? 1 : 0, rank, &workers);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Comm_split");

    if (!is_aggregator) {
        try {
            auto state = std::make_unique<CommState>(workers, config, context, std::move(group), std::move(links));
            state->set_created_by_comm_create();
            library.attach(workers, std::move(state));
        } catch (...) {
            MPI_Comm_free(&workers);
            throw;
        }
        return workers;
    }
    MPI_Comm_free(&workers);
    DedicatedAggregator service(config, context, std::move(group), *links);
    library.register_sink(context, &service);
    try {
        service.serve();
    } catch (...) {
        library.unregister_sink(context);
        throw;
    }
    library.unregister_sink(context);
    return MPI_COMM_NULL;
}

DedicatedAggregator::DedicatedAggregator(const Config &config, std::uint32_t context, Group group, Transport &links)
    : config_(config), context_(context), group_(std::move(group)), links_(links) {}

void DedicatedAggregator::on_message(InboundMessage &&message) {
    const WireHeader &h = message.header;
    if (const char *bad = check_header(h, sizeof(WireHeader))) {
        std::cerr << "mpix_sparse: dedicated aggregator dropped a malformed message: " << bad << '\n';
        links_.release(message);
        return;
    }
    if (h.kind == MessageKind::Goodbye) {
        if (h.sender < group_.workers.size()) ++goodbyes_;
        links_.release(message);
        return;
    }
    if (h.kind != MessageKind::Contribution) {
        links_.release(message);
        return;
    }
    if (op_ && h.seq == spec_.seq)
        op_->on_message(std::move(message));
    else if (h.seq >= next_seq_)
        queued_.push_back(std::move(message));
    else
        links_.release(message);
}

// Starts the operation numbered next_seq_ once one of its messages has arrived: the message says
// what the workers agreed on (the vector, type, op and this aggregator's shard).
bool DedicatedAggregator::start_next() {
    auto first = std::find_if(queued_.begin(), queued_.end(),
                              [&](const InboundMessage &m) { return m.header.seq == next_seq_; });
    if (first == queued_.end()) return false;
    const WireHeader &h = first->header;
    const int me = group_.my_aggregator();
    spec_ = StreamSpec{};
    spec_.context = context_;
    spec_.seq = next_seq_;
    spec_.type = static_cast<ElementType>(h.elem_type);
    spec_.op = static_cast<ReduceOp>(h.reduce_op);
    spec_.layout = BlockLayout{h.count, h.block_elems, static_cast<std::uint32_t>(element_size(spec_.type))};
    spec_.worker_peer = group_.workers;
    spec_.aggregator_peer = group_.aggregators;
    spec_.shard_bounds.assign(group_.aggregators.size() + 1, 0);
    spec_.shard_bounds[static_cast<std::size_t>(me)] = h.shard_lo;
    spec_.shard_bounds[static_cast<std::size_t>(me) + 1] = h.shard_hi;
    spec_.my_aggregator = me;
    spec_.message_bytes = config_.message_bytes;
    spec_.window = config_.window;
    op_.emplace(spec_, links_, resources_, counters_, nullptr, nullptr);
    deliver_queued(
        queued_, [&](const InboundMessage &m) { return m.header.seq == next_seq_; },
        [&](InboundMessage &&m) { op_->on_message(std::move(m)); });
    return true;
}

void DedicatedAggregator::finish() {
    const std::string error = op_->error();
    if (!error.empty())
        std::cerr << "mpix_sparse: dedicated aggregator: operation " << spec_.seq << ": " << error << '\n';
    op_.reset();
    ++next_seq_;
}

void DedicatedAggregator::serve() {
    const int workers = static_cast<int>(group_.workers.size());
    for (;;) {
        bool progressed = links_.progress();
        resources_.reap();
        if (!op_) progressed |= start_next();
        if (op_) {
            progressed |= op_->advance();
            if (op_->done()) {
                finish();
                progressed = true;
            }
        }
        if (!op_ && goodbyes_ == workers && queued_.empty()) break;
        if (!progressed) links_.wait();
    }
    // Result sends whose acknowledgements are still on their way: a bounded wait, then their memory
    // is left behind rather than freed under the transport.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!resources_.reap() && std::chrono::steady_clock::now() < deadline)
        if (!links_.progress()) links_.wait();
    for (auto &m : resources_.draining)
        (void)m.release();
    for (auto &p : resources_.draining_pieces)
        (void)p.release();
}

}  // namespace mpix::sparse::detail
