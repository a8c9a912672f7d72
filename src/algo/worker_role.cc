#include "algo/worker_role.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <sstream>

#include "algo/result_ring.h"
#include "core/error.h"

namespace mpix::sparse::detail {

WorkerRole::WorkerRole(const StreamSpec &spec, Transport &transport, StreamResources &resources, OpCounters &counters,
                       const ContributionSource &source, ResultSink &sink)
    : spec_(spec), transport_(transport), res_(resources), counters_(counters), source_(source), sink_(sink) {
    restart();
}

void WorkerRole::park() {
    // Sends and fetches the transport still holds keep their memory in the drain list.
    for (auto &m : in_flight_)
        res_.drain(std::move(m));
    in_flight_.clear();
    for (auto &p : fetches_)
        res_.drain(std::move(p));
    fetches_.clear();
}

void WorkerRole::restart() {
    park();
    error_ = OpError{};
    injected_ = false;
    shards_done_ = 0;
    // Same aggregator count on a restart: the shards (and their containers) are reused as they are.
    shards_.resize(static_cast<std::size_t>(spec_.aggregators()));
    for (int a = 0; a < spec_.aggregators(); ++a) {
        Shard &s = shards_[static_cast<std::size_t>(a)];
        s.aggregator = a;
        s.hi = spec_.shard_hi(a);
        // The own aggregator (colocated) reads this rank's data directly: nothing to send.
        s.next = a == spec_.my_aggregator ? s.hi : spec_.shard_lo(a);
        s.unacked.clear();
        s.ring = nullptr;  // the segment is recycled between calls
        s.ring_next = 0;
        s.no_ring = false;
        s.results.reset(spec_.shard_lo(a));
        s.forward = nullptr;
        if (spec_.fanout != nullptr && !spec_.fanout->forward[static_cast<std::size_t>(a)].empty())
            s.forward = &spec_.fanout->forward[static_cast<std::size_t>(a)];
        if (spec_.shard_lo(a) == s.hi) ++shards_done_;
        const std::byte *data = s.next < s.hi ? source_.dense_data(s.next) : nullptr;
        const int peer = spec_.aggregator_peer[static_cast<std::size_t>(a)];
        s.gaps_in_place = data != nullptr &&
                          transport_.shares_in_place(&peer, 1, data, spec_.layout.run_bytes(s.next, s.hi - s.next));
    }
    res_.plan_index.resize(static_cast<std::size_t>(spec_.max_blocks_per_message()));
    res_.index_copy.reserve(static_cast<std::size_t>(spec_.max_blocks_per_message()));
    // Results in flight are bounded by the credits: each of the `window` unanswered contributions
    // per aggregator is answered by at most a few result messages. Reserved once, so that timing
    // that puts more in flight than the last call did allocates nothing.
    const auto bound = static_cast<std::size_t>(4 * spec_.window + 4) * shards_.size();
    in_flight_.reserve(bound);
    fetches_.reserve(bound);
    res_.outbound.reserve(2 * bound);
    res_.inbound.reserve(2 * bound);
}

WorkerRole::~WorkerRole() {
    // Whatever the transport still holds keeps its memory in the drain list.
    for (auto &m : in_flight_)
        res_.drain(std::move(m));
    for (auto &p : fetches_)
        res_.drain(std::move(p));
}

void WorkerRole::fail(ErrorId id, const std::string &what) {
    if (!error_) error_ = OpError{id, what};
}

bool WorkerRole::send_contributions(Shard &shard) {
    bool progressed = false;
    const std::uint64_t max_blocks = spec_.max_blocks_per_message();
    const BlockLayout &layout = spec_.layout;
    while (shard.next < shard.hi && shard.unacked.size() < static_cast<std::size_t>(spec_.window)) {
        const std::uint64_t from = shard.next;
        const std::uint64_t limit = std::min(shard.hi, from + spec_.max_packed_span);
        const MessagePlan plan = source_.plan(from, limit, max_blocks, res_.plan_index.data(), shard.gaps_in_place);

        auto message = res_.outbound.get();
        WireHeader &h = message->header;
        h.kind = MessageKind::Contribution;
        h.elem_type = static_cast<std::uint8_t>(spec_.type);
        h.reduce_op = static_cast<std::uint8_t>(spec_.op);
        h.context = spec_.context;
        h.sender = static_cast<std::uint32_t>(spec_.my_worker);
        h.block_elems = layout.block_elems;
        h.num_workers = static_cast<std::uint32_t>(spec_.workers());
        h.seq = spec_.seq;
        h.count = layout.count;
        h.shard_lo = spec_.shard_lo(shard.aggregator);
        h.shard_hi = shard.hi;
        h.begin = from;
        h.end = plan.end;
        const std::byte *payload = nullptr;
        std::size_t bytes = 0;
        if (plan.n > 0) {
            h.flags = static_cast<std::uint8_t>((plan.dense ? kDenseRun : 0) | (plan.presence ? kPresence : 0));
            h.first = plan.dense ? plan.first : 0;
            h.nblocks = plan.dense ? plan.span() : plan.n;
            payload = plan.dense ? source_.dense_run(plan) : nullptr;
            const int peer = spec_.aggregator_peer[static_cast<std::size_t>(shard.aggregator)];
            if (payload != nullptr) {
                // From the user buffer: zero-copy, through the ring, or into shared memory.
                bytes = layout.run_bytes(plan.first, plan.span());
                const bool large = layout.total_bytes() >= kStreamingFillBytes;
                std::byte *slot =
                    large && !transport_.shares_in_place(&peer, 1, payload, bytes) ? ring_slot(shard, bytes) : nullptr;
                if (slot != nullptr) {
                    copy_bytes(slot, payload, bytes, false);
                    store_fence();  // visible before the reference to it travels
                    payload = slot;
                } else {
                    payload = res_.shared_copy(transport_, &peer, 1, payload, bytes, large, &counters_.bytes_in_place);
                }
            } else if (const std::byte *staged = source_.packed_in_place(plan, res_.plan_index.data(), &bytes)) {
                payload = staged;  // where the scan put it, in memory the aggregator reads in place
            } else {
                // Packed where the aggregator reads it in place when the transport shares memory.
                std::byte *dst =
                    res_.payload_buffer(transport_, *message, &peer, 1, max_packed_bytes(plan.n, layout.block_bytes()));
                bytes = source_.pack(plan, from, res_.plan_index.data(), dst);
                transport_.trim_shared(dst, bytes);
                payload = dst;
            }
        }
        const bool inject = !injected_ && (spec_.fail_at == FailPoint::Contribution ||
                                           spec_.fail_at == FailPoint::Corrupt || spec_.fail_at == FailPoint::Throw ||
                                           spec_.fail_at == FailPoint::Stop || spec_.fail_at == FailPoint::Exit);
        if (inject && spec_.fail_at == FailPoint::Corrupt) h.end = h.shard_hi + 1;  // outside the shard
        transport_.send(spec_.aggregator_peer[static_cast<std::size_t>(shard.aggregator)], h, payload, bytes,
                        message->sent);
        counters_.bytes_sent += sizeof(WireHeader) + bytes;
        ++counters_.messages_sent;
        message->end = plan.end;
        shard.unacked.push_back(plan.end);
        shard.next = plan.end;
        in_flight_.push_back(std::move(message));
        progressed = true;
        if (inject) {
            injected_ = true;
            if (spec_.fail_at == FailPoint::Contribution)
                fail(ErrorId::InjectedFailure, "after the first contribution");
            if (spec_.fail_at == FailPoint::Throw)
                throw Error(ErrorId::InjectedFailure, "thrown after the first contribution");
            // A stalled or dead peer, between messages (reliability tests).
            if (spec_.fail_at == FailPoint::Stop) raise(SIGSTOP);
            if (spec_.fail_at == FailPoint::Exit) exit_after_sends();
            break;
        }
    }
    return progressed;
}

// Dense runs of a large vector would go into fresh shared memory with streaming stores, and the
// aggregator would read them back from memory. A ring of `window` slots per aggregator is rewritten
// while it is still cached instead: ordinary stores, and the aggregator reads it from the cache. Two
// processes passing 16 MiB in 256 KiB runs spent 3.7 ms of CPU (copies and additions) through fresh
// memory, 2.8 through a ring (docs/performance.md). A slot is reused only once the run in it is
// answered: a run goes out only while fewer than `window` runs to that aggregator are unanswered, so
// the ring run `window` ring runs earlier is answered by then; and an aggregator answers a range
// only after it has reduced it, the only time it reads a contribution. A ring too large for the
// segment's good (a large window or messages) is not used.
std::byte *WorkerRole::ring_slot(Shard &shard, std::size_t bytes) {
    const std::size_t slot_bytes =
        word_aligned(static_cast<std::size_t>(spec_.max_blocks_per_message()) * spec_.layout.block_bytes());
    const auto slots = static_cast<std::size_t>(spec_.window);
    if (bytes > slot_bytes || shard.no_ring || slots * slot_bytes > kMaxRingBytes) return nullptr;
    if (shard.ring == nullptr) {
        const int peer = spec_.aggregator_peer[static_cast<std::size_t>(shard.aggregator)];
        shard.ring = transport_.shared_buffer(&peer, 1, slots * slot_bytes);
        shard.no_ring = shard.ring == nullptr;
        if (shard.no_ring) return nullptr;
    }
    return shard.ring + static_cast<std::size_t>(shard.ring_next++ % slots) * slot_bytes;
}

// Only for an eager payload, read by now: a result in a ring is sent by reference (to workers that
// all share memory with its aggregator), which arrives eager. Indices outside the marks are ignored:
// the slot then stays taken, and its aggregator sends through fresh memory.
void WorkerRole::release_ring_slot(const WireHeader &h) {
    if (h.ring_use == 0 || h.sender >= kRingMarkAggregators || h.ring_slot >= kRingMarkSlots) return;
    if (std::uint64_t *marks = transport_.published_words())
        __atomic_store_n(marks + ring_mark_index(h.sender, h.ring_slot), ring_mark(h.seq, h.ring_use),
                         __ATOMIC_RELEASE);
}

// The exit hook leaves once its sends were fetched (at most 2 s): a peer reading a dead process's
// memory through CMA is aborted by UCX 1.13 (process_vm_readv: No such process), which is UCX's
// behaviour, not the library's under test (mpi_faults_exit failed 2 runs in 14 that way).
void WorkerRole::exit_after_sends() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    auto sent = [this] {
        return std::all_of(in_flight_.begin(), in_flight_.end(), [](const auto &m) { return m->sent.done(); });
    };
    while (!sent() && std::chrono::steady_clock::now() < deadline) {
        if (!transport_.progress()) transport_.wait();
    }
    _exit(0);
}

void WorkerRole::on_result(InboundMessage &&message) {
    const WireHeader &h = message.header;
    if (spec_.fail_at == FailPoint::Result && !injected_) {
        injected_ = true;
        fail(ErrorId::InjectedFailure, "at the first result");
    }
    counters_.bytes_received += sizeof(WireHeader) + message.bytes;
    ++counters_.messages_received;
    // The sender is compared unsigned: cast to int first, one past INT_MAX would pass as negative.
    const bool known = h.sender < static_cast<std::uint32_t>(spec_.aggregators());
    const int a = known ? static_cast<int>(h.sender) : -1;
    if (!known || a == spec_.my_aggregator || h.shard_lo != spec_.shard_lo(a) || h.shard_hi != spec_.shard_hi(a) ||
        !shards_[static_cast<std::size_t>(a)].results.can_add(h.begin, h.end)) {
        fail(ErrorId::ProtocolViolation, "result from an unexpected sender, or for an empty or already covered range");
        transport_.release(message);
        return;
    }
    if (!message.rendezvous) {
        const std::byte *payload = message.data;
        BufferPool::Buffer copy;
        if (message.bytes > 0 && !aligned8(payload)) {
            copy = res_.buffers.acquire(message.bytes);
            std::memcpy(copy.data(), payload, message.bytes);
            payload = copy.data();
        }
        const bool sender_writable = message.sender_writable && copy.data() == nullptr;
        store_result(h, payload, message.bytes, copy.data() != nullptr ? PayloadHome::Owned : PayloadHome::Transient,
                     &copy, sender_writable);
        release_ring_slot(h);
        res_.buffers.release(std::move(copy));
        transport_.release(message);
        return;
    }
    auto piece = res_.inbound.get();
    piece->message = std::move(message);
    const WireHeader &ph = piece->message.header;
    std::byte *target = nullptr;
    const Shard &shard = shards_[static_cast<std::size_t>(a)];
    if (shard.forward != nullptr) {
        // To be passed on: fetched where the node's workers can read it in place, when they can.
        target = piece->landing =
            transport_.shared_buffer(shard.forward->data(), shard.forward->size(), piece->message.bytes);
    } else if ((ph.flags & kDenseRun) && !(ph.flags & kPresence) &&
               piece->message.bytes == spec_.layout.run_bytes(ph.first, ph.nblocks)) {
        // A gap-free dense run goes straight into the output, after checking it fits exactly there.
        target = sink_.in_place(ph.first, ph.nblocks);
    }
    try {
        if (target == nullptr) {
            piece->buffer = res_.buffers.acquire(piece->message.bytes);
            target = piece->buffer.data();
        }
        transport_.fetch(piece->message, target, piece->fetch);
        fetches_.push_back(std::move(piece));
    } catch (...) {
        // Taken but not kept (no buffer, a fetch refused): the message goes back to the transport,
        // or a fetch under way keeps its buffer; the caller fails the operation.
        res_.give_back(transport_, std::move(piece));
        throw;
    }
}

void WorkerRole::store_result(const WireHeader &h, const std::byte *payload, std::size_t bytes, PayloadHome home,
                              BufferPool::Buffer *owned, bool sender_writable) {
    // The sink reads the block numbers again to write: from a copy the sender cannot change.
    std::uint32_t *index_copy = nullptr;
    if (sender_writable) {
        if (const std::size_t index_bytes = packed_index_bytes(h, bytes)) {
            const std::size_t n = index_bytes / sizeof(std::uint32_t);
            if (res_.index_copy.size() < n) res_.index_copy.resize(n);
            index_copy = res_.index_copy.data();
        }
    }
    MessageView view;
    if (const char *bad = check_payload(h, spec_.layout, payload, bytes, &view, index_copy)) {
        fail(ErrorId::ProtocolViolation, std::string("malformed result: ") + bad);
        return;
    }
    const Shard &shard = shards_[static_cast<std::size_t>(h.sender)];
    // A worker that failed passes nothing on: its Abort reaches its node's workers instead.
    if (shard.forward != nullptr && !error_) forward_result(shard, h, payload, bytes, home, owned);
    write_result(h, view);
}

void WorkerRole::write_result(const WireHeader &h, const MessageView &view) {
    {
        PhaseTimer writing(res_.profile, Phase::ResultWrite);
        sink_.write(view);
    }
    result_covered(static_cast<int>(h.sender), h.begin, h.end);
}

// The forwarded message is the aggregator's, header unchanged: the node's workers cannot tell it
// from one sent to them directly. Its payload must outlive the sends: shared memory (valid until
// the operation's closing barrier, which every reader passes first), the fetch buffer this rank
// hands over, or a copy.
void WorkerRole::forward_result(const Shard &shard, const WireHeader &h, const std::byte *payload, std::size_t bytes,
                                PayloadHome home, BufferPool::Buffer *owned) {
    auto message = res_.outbound.get();
    message->header = h;
    const int *peers = shard.forward->data();
    const std::size_t n = shard.forward->size();
    if (bytes > 0 && home == PayloadHome::Owned) {
        message->buffer = std::move(*owned);
    } else if (bytes > 0 && home == PayloadHome::Transient) {
        std::byte *copy = res_.payload_buffer(transport_, *message, peers, n, bytes);
        std::memcpy(copy, payload, bytes);
        payload = copy;
    }
    transport_.send_to(peers, n, message->header, payload, bytes, message->sent);
    counters_.bytes_sent += (sizeof(WireHeader) + bytes) * n;
    counters_.messages_sent += n;
    in_flight_.push_back(std::move(message));
}

void WorkerRole::local_result(std::uint64_t begin, std::uint64_t end) {
    result_covered(spec_.my_aggregator, begin, end);
}

void WorkerRole::result_covered(int aggregator, std::uint64_t begin, std::uint64_t end) {
    Shard &s = shards_[static_cast<std::size_t>(aggregator)];
    const bool was_done = s.results.prefix() == s.hi;
    // on_result checked the range, but fetches complete in any order: two overlapping ones in flight
    // at once are found here.
    if (!s.results.add(begin, end)) {
        fail(ErrorId::ProtocolViolation, "results for overlapping or empty ranges");
        return;
    }
    // Each message the aggregator has answered past returns its credit.
    std::size_t answered = 0;
    while (answered < s.unacked.size() && s.unacked[answered] <= s.results.prefix())
        ++answered;
    s.unacked.erase(s.unacked.begin(), s.unacked.begin() + static_cast<std::ptrdiff_t>(answered));
    if (!was_done && s.results.prefix() == s.hi) ++shards_done_;
}

bool WorkerRole::settle_fetches() {
    poll_fetches();
    return fetches_.empty();
}

bool WorkerRole::poll_fetches() {
    bool progressed = false;
    for (auto it = fetches_.begin(); it != fetches_.end();) {
        if (!(*it)->fetch.done()) {
            ++it;
            continue;
        }
        progressed = true;
        // Out of the list before it is stored: a piece that fails is not stored (or forwarded) again
        // on every later poll, which would keep settle_fetches() from ever finishing.
        std::unique_ptr<InboundPiece> piece = std::move(*it);
        it = fetches_.erase(it);
        try {
            store_fetched(*piece);
        } catch (const Error &e) {
            fail(e.id(), e.detail());
        } catch (const std::bad_alloc &) {
            fail(ErrorId::OutOfMemory, "storing a fetched result");
        }
        res_.buffers.release(std::move(piece->buffer));
        res_.inbound.put(std::move(piece));
    }
    return progressed;
}

void WorkerRole::store_fetched(InboundPiece &p) {
    const WireHeader &h = p.message.header;
    if (p.fetch.failed) {
        fail(ErrorId::TransportFailure, "fetching a result failed: " + p.fetch.failure);
    } else if (p.landing != nullptr) {
        store_result(h, p.landing, p.message.bytes, PayloadHome::Shared);  // to be forwarded
    } else if (p.buffer.data() == nullptr) {
        // Fetched into the output (its length was checked before): the sink finds the run in place
        // and writes only the zeros around it, when it writes zeros.
        MessageView view;
        view.cover_begin = h.begin;
        view.cover_end = h.end;
        view.dense = true;
        view.first = h.first;
        view.n = h.nblocks;
        view.data = sink_.in_place(h.first, h.nblocks);
        write_result(h, view);
    } else {
        store_result(h, p.buffer.data(), p.message.bytes, PayloadHome::Owned, &p.buffer);
    }
}

bool WorkerRole::reap_sends() {
    std::string failure;
    const bool progressed = res_.recycle_sent(in_flight_, &failure);
    if (!failure.empty())
        fail(ErrorId::TransportFailure, "sending a contribution or a forwarded result failed: " + failure);
    return progressed;
}

bool WorkerRole::advance() {
    bool progressed = poll_fetches();
    progressed |= reap_sends();
    if (error_) return progressed;
    for (Shard &s : shards_)
        progressed |= send_contributions(s);
    return progressed;
}

std::string WorkerRole::describe() const {
    std::ostringstream s;
    s << "worker " << spec_.my_worker << ": " << in_flight_.size() << " sends, " << fetches_.size()
      << " fetches in flight;";
    for (const Shard &sh : shards_)
        s << " shard " << sh.aggregator << " sent to " << sh.next << "/" << sh.hi << " unanswered " << sh.unacked.size()
          << " results to " << sh.results.prefix() << ";";
    return s.str();
}

bool WorkerRole::done() const {
    // All results are in the output. Contributions need no completion: a result covering a range
    // proves its aggregator received this rank's blocks of it.
    if (error_) return true;
    return shards_done_ == shards_.size() && fetches_.empty();
}

}  // namespace mpix::sparse::detail
