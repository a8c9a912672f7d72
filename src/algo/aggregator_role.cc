#include "algo/aggregator_role.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "algo/worker_role.h"

namespace mpix::sparse::detail {

AggregatorRole::AggregatorRole(const StreamSpec &spec, Transport &transport, StreamResources &resources,
                               OpCounters &counters, const ContributionSource *own, ResultSink *own_sink,
                               WorkerRole *own_worker)
    : spec_(spec), transport_(transport), res_(resources), counters_(counters), own_(own), own_sink_(own_sink),
      own_worker_(own_worker), kernels_(kernels_for(spec.type, spec.op)),
      window_blocks_(window_blocks(spec.layout, spec.max_blocks_per_message())),
      reducer_(spec.layout, kernels_, resources, window_blocks_) {
    restart();
}

void AggregatorRole::park() {
    for (Stream &s : streams_) {
        for (auto &p : s.pieces)
            res_.give_back(transport_, std::move(p));
        s.pieces.clear();
    }
    for (auto &m : in_flight_)
        res_.drain(std::move(m));
    in_flight_.clear();
    if (pending_) {
        res_.buffers.release(std::move(pending_->buffer));
        res_.outbound.put(std::move(pending_));
    }
}

void AggregatorRole::restart() {
    park();
    // The reducer's scratch (window counts and marks) is clean: every window it began was finished,
    // as nothing between its begin and finish can fail.
    error_ = OpError{};
    lo_ = spec_.shard_lo(spec_.my_aggregator);
    hi_ = spec_.shard_hi(spec_.my_aggregator);
    done_ = cover_start_ = lo_;
    // Same worker count on a restart: the streams (and their containers) are reused as they are.
    streams_.resize(static_cast<std::size_t>(spec_.workers()));
    for (Stream &s : streams_)
        s.next_begin = lo_;
    // Results go to the workers the fanout names (one per other node with node multicast), else to
    // every worker but this rank.
    remote_workers_.clear();
    if (spec_.fanout != nullptr)
        remote_workers_ = spec_.fanout->direct;
    else
        for (int w = 0; w < spec_.workers(); ++w)
            if (w != spec_.my_worker) remote_workers_.push_back(spec_.worker_peer[static_cast<std::size_t>(w)]);
    // A colocated aggregator reduces straight into a dense output whose zeros are there already (no
    // staging copy; runs go out with their gaps from there).
    in_place_ = own_sink_ != nullptr && own_sink_->zeros_present() && own_sink_->in_place(lo_, 0) != nullptr;
    // A dense host output of whole blocks is written from the window, still cached, rather than read
    // back from the result messages, which then go out with streaming stores. One-element blocks keep
    // the sink's tiled writes. When the workers read that output in place (MPIX_Sparse_alloc_mem),
    // this rank writes its shard's zeros too, around the union, so that dense runs go out with their
    // gaps by reference from it and no result is copied. It still reduces in the window, not in the
    // output: stores into the output would first read each line from memory, where the window's
    // streaming copy only writes it.
    writes_own_ = false;
    output_shared_ = false;
    written_to_ = lo_;
    if (!in_place_ && own_sink_ != nullptr && lo_ < hi_) {
        const std::byte *out = own_sink_->overwrite(lo_, hi_ - lo_);
        output_shared_ = out != nullptr && transport_.shares_in_place(remote_workers_.data(), remote_workers_.size(),
                                                                      out, spec_.layout.run_bytes(lo_, hi_ - lo_));
        writes_own_ = out != nullptr && (output_shared_ || spec_.layout.block_bytes() >= kStreamingBlockBytes);
    }
    // Packed results of a large vector go to memory with streaming stores when this rank's output is
    // not written from them (measured for colocated aggregators only; dedicated ones keep the cache).
    stream_packed_ = writes_own_ && spec_.layout.total_bytes() >= kStreamingFillBytes;
    plan_result_ring();
    // Pieces kept per worker are bounded by its credits (window); results in flight likewise.
    const auto window = static_cast<std::size_t>(spec_.window + 1);
    for (Stream &s : streams_)
        s.pieces.reserve(window);
    in_flight_.reserve(4 * window * streams_.size());
}

// A ring for the results of a large vector, when every worker this rank sends results to publishes
// its marks where this rank reads them (they share memory), and the marks have room for this
// aggregator and its slots. (With node multicast, a worker passing a result on copies it before it
// marks it read: WorkerRole::forward_result.) As many slots as a worker has contributions
// unanswered: by the time this rank reduces a window, each worker has sent the contribution `window`
// runs past one whose result used the slot before. Counted at 64 MiB on 4 ranks: every result at
// 100% density found its slot free, about half at 10-50% (results do not follow contributions one
// to one there); twice the slots found nearly all free but measured no faster.
void AggregatorRole::plan_result_ring() {
    ring_ = nullptr;
    ring_slots_ = 0;
    ring_uses_ = 0;
    ring_last_.fill(0);
    ring_readers_.clear();
    const auto slots = static_cast<std::size_t>(spec_.window);
    if (remote_workers_.empty() || spec_.layout.total_bytes() < kStreamingFillBytes ||
        static_cast<std::size_t>(spec_.my_aggregator) >= kRingMarkAggregators || slots > kRingMarkSlots)
        return;
    const std::uint64_t per_message = spec_.max_blocks_per_message();
    const std::size_t block_bytes = spec_.layout.block_bytes();
    const std::size_t dense =
        word_aligned(static_cast<std::size_t>(per_message) * block_bytes) + presence_bytes(per_message);
    ring_slot_bytes_ = (std::max(dense, max_packed_bytes(per_message, block_bytes)) + 63) & ~std::size_t{63};
    if (slots * ring_slot_bytes_ > kMaxRingBytes) return;
    for (int w : remote_workers_) {
        const std::uint64_t *marks = transport_.peer_published_words(w);
        if (marks == nullptr) return;
        ring_readers_.push_back(marks);
    }
    ring_slots_ = slots;
}

std::byte *AggregatorRole::result_slot(WireHeader &h, std::size_t bytes) {
    h.ring_slot = h.ring_use = 0;
    if (ring_slots_ == 0 || bytes > ring_slot_bytes_) return nullptr;
    const std::size_t slot = ring_uses_ % ring_slots_;
    if (const std::uint32_t last = ring_last_[slot]; last != 0) {
        // Not waited for: a slot still read means that result goes through fresh memory.
        const std::uint64_t read = ring_mark(spec_.seq, last);
        const std::size_t at = ring_mark_index(static_cast<std::size_t>(spec_.my_aggregator), slot);
        for (const std::uint64_t *marks : ring_readers_)
            if (__atomic_load_n(marks + at, __ATOMIC_ACQUIRE) != read) return nullptr;
    }
    if (ring_ == nullptr) {
        ring_ =
            transport_.shared_buffer(remote_workers_.data(), remote_workers_.size(), ring_slots_ * ring_slot_bytes_);
        if (ring_ == nullptr) {
            ring_slots_ = 0;
            return nullptr;
        }
    }
    ring_last_[slot] = ++ring_uses_;
    h.ring_slot = static_cast<std::uint32_t>(slot);
    h.ring_use = ring_uses_;
    return ring_ + slot * ring_slot_bytes_;
}

AggregatorRole::~AggregatorRole() {
    for (Stream &s : streams_)
        for (auto &p : s.pieces)
            res_.give_back(transport_, std::move(p));
    // Sends not yet completed by the transport keep their memory in the drain list.
    for (auto &m : in_flight_)
        res_.drain(std::move(m));
    if (pending_) {
        res_.buffers.release(std::move(pending_->buffer));
        res_.outbound.put(std::move(pending_));
    }
}

void AggregatorRole::fail(ErrorId id, const std::string &what) {
    if (!error_) error_ = OpError{id, what};
}

void AggregatorRole::on_contribution(InboundMessage &&message) {
    const WireHeader &h = message.header;
    if (spec_.fail_at == FailPoint::Aggregate && !error_) fail(ErrorId::InjectedFailure, "at the first contribution");
    counters_.bytes_received += sizeof(WireHeader) + message.bytes;
    ++counters_.messages_received;
    // The sender is compared unsigned: cast to int first, one past INT_MAX would pass as negative.
    if (h.sender >= static_cast<std::uint32_t>(spec_.workers()) || static_cast<int>(h.sender) == spec_.my_worker ||
        h.shard_lo != lo_ || h.shard_hi != hi_) {
        fail(ErrorId::ProtocolViolation, "contribution from an unexpected sender or for another shard");
        transport_.release(message);
        return;
    }
    // Every contribution moves its worker's stream on. An empty one would sort after a kept piece
    // beginning where it does, where release_consumed() and covered() never get past it: a stall.
    if (h.begin >= h.end) {
        fail(ErrorId::ProtocolViolation, "empty contribution range");
        transport_.release(message);
        return;
    }
    Stream &s = streams_[static_cast<std::size_t>(h.sender)];
    // Ranges of one worker tile the shard: a new one must not overlap what is kept or consumed.
    bool overlaps = h.begin < s.next_begin;
    for (const auto &p : s.pieces)
        overlaps |= h.begin < p->message.header.end && p->message.header.begin < h.end;
    if (overlaps) {
        fail(ErrorId::ProtocolViolation, "overlapping contribution ranges");
        transport_.release(message);
        return;
    }
    auto piece = res_.inbound.get();
    piece->message = std::move(message);
    try {
        if (piece->message.rendezvous) {
            piece->buffer = res_.buffers.acquire(piece->message.bytes);
            transport_.fetch(piece->message, piece->buffer.data(), piece->fetch);
        } else if (!make_ready(*piece)) {
            res_.give_back(transport_, std::move(piece));
            return;
        }
        auto at = std::find_if(s.pieces.begin(), s.pieces.end(),
                               [&](const auto &p) { return p->message.header.begin > piece->message.header.begin; });
        s.pieces.insert(at, std::move(piece));
    } catch (...) {
        // Taken but not kept (no buffer, a fetch refused): the message goes back to the transport,
        // or a fetch under way keeps its buffer; the caller fails the operation.
        res_.give_back(transport_, std::move(piece));
        throw;
    }
}

// Locates the blocks of a piece whose payload is in memory; false (and an error) if malformed.
bool AggregatorRole::make_ready(InboundPiece &piece) {
    const std::byte *payload = piece.message.rendezvous ? piece.buffer.data() : piece.message.data;
    if (!piece.message.rendezvous && piece.message.bytes > 0 && !aligned8(payload)) {
        piece.buffer = res_.buffers.acquire(piece.message.bytes);
        std::memcpy(piece.buffer.data(), payload, piece.message.bytes);
        payload = piece.buffer.data();
    }
    // Read where its sender can still write it: the block numbers, which the cursor reads again when
    // it reduces, go into the piece's own buffer (unused otherwise) and are checked there.
    std::uint32_t *index_copy = nullptr;
    if (piece.message.sender_writable && payload == piece.message.data) {
        if (const std::size_t bytes = packed_index_bytes(piece.message.header, piece.message.bytes)) {
            piece.buffer = res_.buffers.acquire(bytes);
            index_copy = reinterpret_cast<std::uint32_t *>(piece.buffer.data());
        }
    }
    if (const char *bad =
            check_payload(piece.message.header, spec_.layout, payload, piece.message.bytes, &piece.view, index_copy)) {
        fail(ErrorId::ProtocolViolation, std::string("malformed contribution: ") + bad);
        return false;
    }
    piece.cursor = MessageCursor(piece.view, spec_.layout);
    piece.ready = true;
    return true;
}

bool AggregatorRole::poll_fetches() {
    bool progressed = false;
    for (Stream &s : streams_) {
        for (auto &p : s.pieces) {
            if (p->ready || !p->fetch.done()) continue;
            progressed = true;
            if (p->fetch.failed) {
                fail(ErrorId::TransportFailure, "fetching a contribution failed: " + p->fetch.failure);
                continue;
            }
            make_ready(*p);
        }
    }
    return progressed;
}

std::uint64_t AggregatorRole::covered(const Stream &s) const {
    std::uint64_t c = s.next_begin;
    for (const auto &p : s.pieces) {
        if (!p->ready || p->message.header.begin != c) break;
        c = p->message.header.end;
    }
    return c;
}

std::uint64_t AggregatorRole::frontier() const {
    std::uint64_t f = hi_;
    for (std::size_t w = 0; w < streams_.size(); ++w)
        if (static_cast<int>(w) != spec_.my_worker) f = std::min(f, covered(streams_[w]));
    return f;
}

std::uint64_t AggregatorRole::next_block(std::uint64_t from, std::uint64_t limit) const {
    std::uint64_t k = own_ ? own_->next(from, limit) : limit;
    for (std::size_t w = 0; w < streams_.size(); ++w) {
        for (const auto &p : streams_[w].pieces) {
            if (!p->ready || p->message.header.begin >= k) break;
            const std::uint64_t b = p->cursor.peek();
            if (b != MessageCursor::kEnd) {
                k = std::min(k, b);
                break;
            }
        }
    }
    return std::min(k, limit);
}

bool AggregatorRole::advance() {
    bool progressed = poll_fetches();
    progressed |= reap_sends();
    if (error_) return progressed;
    const std::uint64_t limit = frontier();
    while (done_ < limit) {
        const std::uint64_t base = next_block(done_, limit);
        if (base == limit) {
            done_ = limit;
            break;
        }
        const std::uint64_t end = std::min(limit, base + window_blocks_);
        reduce_window(base, end);
        done_ = end;
        progressed = true;
    }
    if (writes_own_ && written_to_ < done_) write_own(done_, done_, 0, nullptr);  // a stretch no rank had data in
    if (cover_start_ < done_ && done_ == limit) {
        // At the frontier: send what is packed, or just tell the workers how far results reach (which
        // also returns their credits).
        if (pending_)
            flush_pending(done_);
        else
            send_coverage(done_);
        progressed = true;
    }
    release_consumed();
    return progressed;
}

void AggregatorRole::reduce_window(std::uint64_t base, std::uint64_t end) {
    const std::uint64_t span = end - base;
    const std::size_t block_bytes = spec_.layout.block_bytes();
    std::optional<PhaseTimer> reducing(std::in_place, res_.profile, Phase::Reduce);
    std::byte *acc = in_place_ ? own_sink_->in_place(base, span) : nullptr;
    if (!in_place_) {
        if (res_.window.size() < span * block_bytes) res_.window.resize(span * block_bytes);
        acc = res_.window.data();
    }
    reducer_.begin(base, span, acc);
    auto visit = [&](const BlockBatch &b) { reducer_.add(b); };
    // Fixed order: this rank's own blocks first, then the other workers by index. The result is the
    // same on every rank (one aggregator computes it) and from run to run.
    if (own_) own_->visit(base, end, visit);
    for (std::size_t w = 0; w < streams_.size(); ++w) {
        for (auto &p : streams_[w].pieces) {
            if (p->message.header.begin >= end) break;
            p->cursor.take_until(end, visit);
        }
    }
    const std::size_t u = reducer_.finish(static_cast<std::uint32_t>(spec_.workers()));
    reducing.reset();
    if (writes_own_) write_own(base, end, u, in_place_ ? nullptr : acc);

    if (u == 0) return;
    const BlockLayout &layout = spec_.layout;
    const std::uint64_t per_message = spec_.max_blocks_per_message();
    for (std::size_t from = 0; from < u; from += per_message) {
        const std::size_t to = std::min<std::size_t>(u, from + per_message);
        const std::uint64_t first = base + res_.union_[from];
        const std::uint64_t last = base + res_.union_[to - 1];
        const std::size_t n = to - from;
        const std::uint64_t run = last - first + 1;
        const std::size_t packed =
            word_aligned((n - 1) * block_bytes + layout.bytes_of(last)) + n * sizeof(std::uint32_t);
        const std::size_t run_bytes = layout.run_bytes(first, run);
        const std::size_t dense = n < run ? word_aligned(run_bytes) + presence_bytes(run) : run_bytes;
        if (dense <= packed) {
            flush_pending(first);
            emit_dense(base, acc, from, to, to < u ? base + res_.union_[to] : end);
        } else if (spec_.layout.block_elems == 1) {
            append_packed_elements(base, acc, from, to);
        } else {
            // A run of adjacent union blocks is one copy: they are adjacent in the window and packed.
            for (std::size_t i = from; i < to;) {
                const std::size_t j = adjacent_run_end(res_.union_.data(), i, to);
                const std::uint64_t block = base + res_.union_[i];
                append_packed(block, j - i, acc + (block - base) * block_bytes);
                i = j;
            }
        }
    }
}

void AggregatorRole::write_own(std::uint64_t base, std::uint64_t end, std::size_t u, const std::byte *window) {
    PhaseTimer writing(res_.profile, Phase::ResultWrite);
    const BlockLayout &layout = spec_.layout;
    const bool streaming = layout.total_bytes() >= kStreamingFillBytes;
    auto zero = [&](std::uint64_t from, std::uint64_t to) {
        if (from < to) fill_zero(own_sink_->overwrite(from, to - from), layout.run_bytes(from, to - from), streaming);
    };
    std::uint64_t at = written_to_;
    for (std::size_t i = 0; i < u;) {
        const std::size_t j = adjacent_run_end(res_.union_.data(), i, u);  // union entries [i, j): one run
        const std::uint64_t first = base + res_.union_[i];
        zero(at, first);
        if (window != nullptr)
            copy_bytes(own_sink_->overwrite(first, j - i), window + (first - base) * layout.block_bytes(),
                       layout.run_bytes(first, j - i), streaming);
        at = first + (j - i);
        i = j;
    }
    zero(at, end);
    written_to_ = std::max(written_to_, end);
    // Streaming stores are ordered before the references to the runs around them travel.
    if (streaming) store_fence();
}

WireHeader AggregatorRole::result_header(std::uint64_t begin, std::uint64_t end) const {
    WireHeader h;
    h.kind = MessageKind::Result;
    h.elem_type = static_cast<std::uint8_t>(spec_.type);
    h.reduce_op = static_cast<std::uint8_t>(spec_.op);
    h.context = spec_.context;
    h.sender = static_cast<std::uint32_t>(spec_.my_aggregator);
    h.block_elems = spec_.layout.block_elems;
    h.num_workers = static_cast<std::uint32_t>(spec_.workers());
    h.seq = spec_.seq;
    h.count = spec_.layout.count;
    h.shard_lo = lo_;
    h.shard_hi = hi_;
    h.begin = begin;
    h.end = end;
    return h;
}

// Sends union entries [from, to) of the current window as one dense run covering
// [cover_start_, cover_end). Reducing in place, or into an output the workers read in place:
// straight from the output, whose gap blocks are zero there already (no rank contributed them; they
// were zero in place, written before the stream, or written by write_own), and every rank's output
// is dense (outputs are of one kind on all ranks, and only a dense one is reduced into or written by
// write_own), so no presence bitmap is needed. Else copied, zeros in the gaps, with a presence bitmap
// (a sparse output needs the union exactly).
void AggregatorRole::emit_dense(std::uint64_t base, const std::byte *acc, std::size_t from, std::size_t to,
                                std::uint64_t cover_end) {
    const BlockLayout &layout = spec_.layout;
    const std::size_t block_bytes = layout.block_bytes();
    const std::uint64_t first = base + res_.union_[from];
    const std::uint64_t span = base + res_.union_[to - 1] - first + 1;
    const bool gaps = to - from < span;
    const bool from_output = in_place_ || output_shared_;
    const bool presence = gaps && !from_output;
    auto message = res_.outbound.get();
    message->header = result_header(cover_start_, cover_end);
    message->header.flags = static_cast<std::uint8_t>(kDenseRun | (presence ? kPresence : 0));
    message->header.first = first;
    message->header.nblocks = span;
    const std::byte *run = acc + (first - base) * block_bytes;
    const std::size_t run_bytes = layout.run_bytes(first, span);
    const std::size_t bitmap_at = word_aligned(run_bytes);
    const std::size_t bytes = presence ? bitmap_at + presence_bytes(span) : run_bytes;
    bool streaming = layout.total_bytes() >= kStreamingFillBytes;
    const std::byte *payload = run;
    if (from_output) {
        // Straight from the output buffer (which outlives the sends; write_own made it final there when
        // reduced in the window), or from shared memory.
        if (output_shared_) run = own_sink_->overwrite(first, span);
        payload = res_.shared_copy(transport_, remote_workers_.data(), remote_workers_.size(), run, bytes, streaming,
                                   &counters_.bytes_in_place);
    } else {
        std::byte *dst = result_slot(message->header, bytes);
        if (dst != nullptr)
            streaming = false;  // rewritten while cached, and read from there
        else
            dst = result_buffer(*message, bytes);
        copy_bytes(dst, run, run_bytes, streaming);
        // Ordered before the gaps' zeros (the same bytes, after streaming stores) and the send.
        store_fence();
        if (gaps) {
            std::memset(dst + run_bytes, 0, bitmap_at - run_bytes);
            auto *bits = reinterpret_cast<std::uint32_t *>(dst + bitmap_at);
            std::memset(bits, 0, presence_bytes(span));
            std::size_t next = from;
            for (std::uint64_t i = 0; i < span; ++i) {
                if (next < to && base + res_.union_[next] == first + i) {
                    bits[i >> 5] |= std::uint32_t{1} << (i & 31);
                    ++next;
                } else {
                    // Gap blocks must be zero bytes on the wire: a dense output copies them.
                    std::memset(dst + i * block_bytes, 0, layout.bytes_of(first + i));
                }
            }
        }
        payload = dst;
    }
    finish_result(std::move(message), payload, bytes, cover_end);
}

// Adds a run of `count` adjacent union blocks to the packed result being filled, sending it first
// when it is full (and again as often as the run fills it).
void AggregatorRole::append_packed(std::uint64_t block, std::size_t count, const std::byte *data) {
    const std::uint64_t per_message = spec_.max_blocks_per_message();
    const std::uint64_t span = spec_.max_packed_span;
    while (count > 0) {
        if (pending_ && (pending_n_ == per_message || block - cover_start_ >= span)) flush_pending(block);
        if (!pending_) {
            // Block numbers are offsets below the span from the message's begin: skip long empty
            // stretches first.
            if (block - cover_start_ >= span) send_coverage(block);
            pending_ = res_.outbound.get();
            const std::size_t room = max_packed_bytes(per_message, spec_.layout.block_bytes());
            pending_data_ = result_slot(pending_->header, room);  // marks the header when in the ring
            if (pending_data_ == nullptr) pending_data_ = result_buffer(*pending_, room);
            pending_n_ = 0;
            pending_bytes_ = 0;
            res_.result_index.resize(static_cast<std::size_t>(per_message));
        }
        // As much of the run as the message has room for, within the span from its begin.
        const std::uint64_t offset = block - cover_start_;
        const auto take =
            static_cast<std::size_t>(std::min<std::uint64_t>({count, per_message - pending_n_, span - offset}));
        const std::size_t bytes = spec_.layout.run_bytes(block, take);
        copy_bytes(pending_data_ + pending_bytes_, data, bytes, stream_packed_ && pending_->header.ring_use == 0);
        std::uint32_t *index = res_.result_index.data() + pending_n_;
        for (std::size_t k = 0; k < take; ++k)
            index[k] = static_cast<std::uint32_t>(offset + k);
        pending_n_ += take;
        pending_bytes_ += bytes;
        block += take;
        data += bytes;
        count -= take;
    }
}

// append_packed for one-element blocks, a run of union entries at a time (no per-element calls).
void AggregatorRole::append_packed_elements(std::uint64_t base, const std::byte *acc, std::size_t from,
                                            std::size_t to) {
    const std::size_t elem = spec_.layout.elem_size;
    const std::uint64_t per_message = spec_.max_blocks_per_message();
    while (from < to) {
        const std::uint64_t block = base + res_.union_[from];
        if (!pending_ || pending_n_ == per_message || block - cover_start_ >= spec_.max_packed_span) {
            append_packed(block, 1, acc + (block - base) * elem);  // starts (or restarts) the message
            ++from;
            continue;
        }
        // As many as fit in the message and within the span from its begin.
        std::size_t take = std::min<std::size_t>(to - from, static_cast<std::size_t>(per_message - pending_n_));
        while (take > 0 && base + res_.union_[from + take - 1] - cover_start_ >= spec_.max_packed_span)
            --take;
        std::byte *data = pending_data_ + pending_bytes_;
        std::uint32_t *index = res_.result_index.data() + pending_n_;
        const auto shift = static_cast<std::uint32_t>(base - cover_start_);
        if (elem == 4) {
            for (std::size_t i = 0; i < take; ++i) {
                std::memcpy(data + i * 4, acc + std::size_t{res_.union_[from + i]} * 4, 4);
                index[i] = res_.union_[from + i] + shift;
            }
        } else {
            for (std::size_t i = 0; i < take; ++i) {
                std::memcpy(data + i * elem, acc + std::size_t{res_.union_[from + i]} * elem, elem);
                index[i] = res_.union_[from + i] + shift;
            }
        }
        pending_n_ += take;
        pending_bytes_ += take * elem;
        from += take;
    }
}

// Sends the packed result being filled, covering [cover_start_, end). A range longer than a packed
// message may cover (receivers refuse it) ends after the message's last block, and a coverage message
// covers the rest.
void AggregatorRole::flush_pending(std::uint64_t end) {
    if (!pending_) return;
    const std::uint64_t full_end = end;
    if (end - cover_start_ > spec_.max_packed_span)
        end = cover_start_ + std::uint64_t{res_.result_index[pending_n_ - 1]} + 1;
    std::byte *dst = pending_data_;
    const std::size_t bytes = write_packed_index(dst, pending_bytes_, res_.result_index.data(), pending_n_);
    store_fence();  // the payload before the send
    // A ring slot is not trimmed: the ring may be the segment's latest allocation, and trimming it
    // would hand its other slots out again.
    if (pending_->header.ring_use == 0) transport_.trim_shared(dst, bytes);
    const std::uint32_t ring_slot = pending_->header.ring_slot, ring_use = pending_->header.ring_use;
    pending_->header = result_header(cover_start_, end);
    pending_->header.nblocks = pending_n_;
    pending_->header.ring_slot = ring_slot;
    pending_->header.ring_use = ring_use;
    finish_result(std::move(pending_), dst, bytes, end);
    pending_n_ = 0;
    pending_bytes_ = 0;
    if (end < full_end) send_coverage(full_end);
}

// Hands a result message to every remote worker and to this rank's own output.
void AggregatorRole::finish_result(std::unique_ptr<OutboundMessage> message, const std::byte *payload,
                                   std::size_t bytes, std::uint64_t cover_end) {
    if (own_sink_ && !in_place_ && !writes_own_) {
        MessageView view;
        if (const char *bad = check_payload(message->header, spec_.layout, payload, bytes, &view))
            fail(ErrorId::ProtocolViolation, std::string("own result malformed: ") + bad);
        else {
            PhaseTimer writing(res_.profile, Phase::ResultWrite);
            own_sink_->write(view);
        }
    }
    const std::uint64_t begin = cover_start_;
    send_to_workers(std::move(message), payload, bytes);
    if (own_worker_) own_worker_->local_result(begin, cover_end);
    cover_start_ = cover_end;
}

void AggregatorRole::send_to_workers(std::unique_ptr<OutboundMessage> message, const std::byte *payload,
                                     std::size_t bytes) {
    transport_.send_to(remote_workers_.data(), remote_workers_.size(), message->header, payload, bytes, message->sent);
    counters_.bytes_sent += (sizeof(WireHeader) + bytes) * remote_workers_.size();
    counters_.messages_sent += remote_workers_.size();
    in_flight_.push_back(std::move(message));
}

std::byte *AggregatorRole::result_buffer(OutboundMessage &message, std::size_t bytes) {
    return res_.payload_buffer(transport_, message, remote_workers_.data(), remote_workers_.size(), bytes);
}

void AggregatorRole::send_coverage(std::uint64_t end) {
    auto message = res_.outbound.get();
    message->header = result_header(cover_start_, end);
    finish_result(std::move(message), nullptr, 0, end);
}

void AggregatorRole::release_consumed() {
    for (Stream &s : streams_) {
        while (!s.pieces.empty() && s.pieces.front()->ready && s.pieces.front()->message.header.end <= done_ &&
               s.pieces.front()->message.header.begin == s.next_begin) {
            s.next_begin = s.pieces.front()->message.header.end;
            res_.give_back(transport_, std::move(s.pieces.front()));
            s.pieces.erase(s.pieces.begin());
        }
    }
}

bool AggregatorRole::reap_sends() {
    std::string failure;
    const bool progressed = res_.recycle_sent(in_flight_, &failure);
    if (!failure.empty()) fail(ErrorId::TransportFailure, "sending a result failed: " + failure);
    return progressed;
}

std::string AggregatorRole::describe() const {
    std::ostringstream s;
    s << "aggregator " << spec_.my_aggregator << " of [" << lo_ << ", " << hi_ << "): reduced to " << done_
      << ", results cover to " << cover_start_ << ", frontier " << frontier() << ", " << in_flight_.size()
      << " sends in flight";
    for (const auto &m : in_flight_)
        s << " [" << m->header.begin << "," << m->header.end << " n=" << m->header.nblocks
          << " f=" << int(m->header.flags) << " pending=" << m->sent.pending
          << (m->buffer.data() ? " copy" : " in-place") << "]";
    s << ";";
    for (std::size_t w = 0; w < streams_.size(); ++w) {
        if (static_cast<int>(w) == spec_.my_worker) continue;
        const Stream &st = streams_[w];
        s << " worker " << w << " covered to " << covered(st) << " (" << st.pieces.size() << " pieces";
        for (const auto &p : st.pieces)
            s << " [" << p->message.header.begin << "," << p->message.header.end << (p->ready ? ")" : ") fetching");
        s << ");";
    }
    return s.str();
}

bool AggregatorRole::done() const {
    // Every result is posted. Send completions are not awaited here: a rendezvous send completes only
    // on the receiver's acknowledgement, which a receiver that has finished may never progress; the
    // caller's completion barrier guarantees the receivers have the data (see SparseOperation).
    if (error_) return true;
    return done_ == hi_ && cover_start_ == hi_ && !pending_;
}

}  // namespace mpix::sparse::detail
