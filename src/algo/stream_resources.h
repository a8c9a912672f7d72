// Memory a communicator keeps between streamed reductions so that steady-state calls allocate
// nothing: staging buffers, message records, and the aggregator's window scratch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algo/block_batch.h"
#include "algo/buffer_pool.h"
#include "algo/message_cursor.h"
#include "core/memory_ops.h"
#include "core/phase_profile.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

// A message on its way out. Header and payload must stay valid until `sent` completes (UCX 1.13
// reads an active message's header until the send completes).
struct OutboundMessage {
    WireHeader header{};
    BufferPool::Buffer buffer;  // owned payload copy, if any
    Completion sent;
    std::uint64_t end = 0;  // coverage end (worker streams: for credits)
};

// A message that arrived; its payload is here (eager) or being fetched (rendezvous).
struct InboundPiece {
    InboundMessage message;
    // Where a rendezvous payload (or a realigned eager one) lives, or the block numbers of a payload
    // its sender can still write, copied out.
    BufferPool::Buffer buffer;
    std::byte *landing = nullptr;  // or: where it was fetched to in shared memory (results to forward)
    Completion fetch;
    bool ready = false;
    MessageView view{};
    MessageCursor cursor;
};

// Recycles heap objects whose addresses must stay stable while UCX holds pointers into them.
template <class T>
class Recycler {
  public:
    std::unique_ptr<T> get() {
        if (spare_.empty()) {
            ++created_;
            return std::make_unique<T>();
        }
        std::unique_ptr<T> p = std::move(spare_.back());
        spare_.pop_back();
        return p;
    }
    void put(std::unique_ptr<T> p) {
        if (!p) return;
        *p = T{};
        spare_.push_back(std::move(p));
    }
    // Creates objects up front until `n` exist, so that a stream with at most n in flight never
    // allocates (how many are in flight at once varies with timing from call to call).
    void reserve(std::size_t n) {
        spare_.reserve(n);
        for (; created_ < n; ++created_)
            spare_.push_back(std::make_unique<T>());
    }

  private:
    std::vector<std::unique_ptr<T>> spare_;
    std::size_t created_ = 0;
};

// One gathered allgather record, checked, with how far it has been reduced. Its block numbers are
// uint32 or uint64 (BlockLayout::number_bytes), as its reader knows.
struct GatheredRecord {
    const void *index;
    const std::byte *data;
    std::uint64_t n, at;
    std::uint64_t tile_from = 0;  // where the tile being built began in it (scatter_records)
};

struct StreamResources {
    BufferPool buffers;
    Recycler<OutboundMessage> outbound;
    Recycler<InboundPiece> inbound;
    // Sends whose data every receiver already has, still waiting for the transport's completion (a
    // rendezvous sender completes only when the receiver's acknowledgement arrives, which can be after
    // this rank's operation ended). Their memory must outlive the transport's callbacks.
    std::vector<std::unique_ptr<OutboundMessage>> draining;
    std::vector<std::unique_ptr<InboundPiece>> draining_pieces;
    std::vector<std::byte> window;               // aggregator accumulator when not reducing in place
    std::vector<std::uint32_t> counts;           // contributors per window block
    std::vector<std::uint64_t> touched;          // window blocks with a contribution (one bit each)
    std::vector<std::uint32_t> union_;           // window positions with a contribution
    std::vector<float> wide;                     // float accumulator of 16-bit float windows
    std::vector<BlockBatch> pending_runs;        // a window's contiguous runs, reduced together (WindowReducer)
    std::vector<std::uint64_t> run_bounds;       // where those runs begin and end
    std::vector<const std::byte *> run_sources;  // the runs over one stretch between bounds, in order
    std::vector<std::uint32_t> plan_index;       // worker's message plan scratch
    std::vector<std::uint32_t> result_index;     // aggregator's packed result block numbers
    std::vector<std::uint32_t> index_copy;       // worker: block numbers copied from where their sender writes
    std::vector<GatheredRecord> records;         // the allgather algorithm's records
    PhaseProfile *profile = nullptr;             // the running operation's communicator's, when profiling

    // Memory for the payload of `m` to `peers`: shared with them when the transport can (they read it
    // in place; it stays valid until the operation's closing barrier), else a pooled buffer m owns.
    std::byte *payload_buffer(Transport &transport, OutboundMessage &m, const int *peers, std::size_t n,
                              std::size_t bytes) {
        if (std::byte *shared = transport.shared_buffer(peers, n, bytes)) return shared;
        m.buffer = buffers.acquire(bytes);
        return m.buffer.data();
    }

    // A payload in the user's buffers, to be sent. Peers read it where it is when it lies in memory
    // from MPIX_Sparse_alloc_mem (counted in *in_place). Else, for a vector too large to stay cached
    // (`streaming`), it is copied here into memory shared with them, with streaming stores, when
    // there is some: the transport's own copy into shared memory uses ordinary stores, which read each
    // line from memory before overwriting it. Else (or for a smaller vector) the payload itself.
    const std::byte *shared_copy(Transport &transport, const int *peers, std::size_t n, const std::byte *payload,
                                 std::size_t bytes, bool streaming, std::uint64_t *in_place) {
        if (transport.shares_in_place(peers, n, payload, bytes)) {
            *in_place += bytes;
            return payload;
        }
        if (!streaming) return payload;
        std::byte *shared = transport.shared_buffer(peers, n, bytes);
        if (shared == nullptr) return payload;
        copy_bytes(shared, payload, bytes, true);
        store_fence();  // visible before the reference to it travels
        return shared;
    }

    // Room in the drain lists for `sends` and `pieces` more: how many a restart moves there depends on
    // timing, and a persistent loop must not allocate when it meets a new high-water mark. Twice
    // that, as leftovers of the last stream (sends the transport has not completed yet) may still be
    // there.
    void reserve_draining(std::size_t sends, std::size_t pieces) {
        room_for(draining, sends);
        room_for(draining_pieces, pieces);
    }
    void drain(std::unique_ptr<OutboundMessage> m) { draining.push_back(std::move(m)); }
    void drain(std::unique_ptr<InboundPiece> p) { draining_pieces.push_back(std::move(p)); }
    // A piece its role keeps no longer: its message back to the transport (nothing once fetched: the
    // fetch took the descriptor), its buffer and itself back to their pools; or, while a fetch still
    // writes into it, kept alive in the drain list.
    void give_back(Transport &transport, std::unique_ptr<InboundPiece> p) {
        if (!p) return;
        if (!p->fetch.done()) return drain(std::move(p));
        transport.release(p->message);
        buffers.release(std::move(p->buffer));
        inbound.put(std::move(p));
    }

    // Recycles the sends of `list` the transport has completed; the first failure goes to *failure
    // (when given). True when any completed.
    bool recycle_sent(std::vector<std::unique_ptr<OutboundMessage>> &list, std::string *failure) {
        return recycle(list, outbound, [&](OutboundMessage &m) {
            if (!m.sent.done()) return false;
            if (m.sent.failed && failure != nullptr && failure->empty()) *failure = m.sent.failure;
            return true;
        });
    }
    // Gives up what the transport may still touch: leaked rather than freed under it (teardown,
    // after a bounded wait).
    void abandon() {
        for (auto &m : draining)
            (void)m.release();
        for (auto &p : draining_pieces)
            (void)p.release();
        draining.clear();
        draining_pieces.clear();
    }
    // Recycles what completed; true when nothing is left draining.
    bool reap() {
        recycle_sent(draining, nullptr);
        recycle(draining_pieces, inbound, [](InboundPiece &p) { return p.fetch.done(); });
        return draining.empty() && draining_pieces.empty();
    }

  private:
    template <class T>
    static void room_for(std::vector<T> &list, std::size_t more) {
        if (list.capacity() - list.size() < more) list.reserve(std::max(2 * list.capacity(), 2 * (list.size() + more)));
    }
    // Moves the entries of `list` that `finished` accepts back to their recycler, buffers to the pool.
    template <class T, class Finished>
    bool recycle(std::vector<std::unique_ptr<T>> &list, Recycler<T> &recycler, Finished &&finished) {
        bool any = false;
        for (auto it = list.begin(); it != list.end();) {
            if (!finished(**it)) {
                ++it;
                continue;
            }
            buffers.release(std::move((*it)->buffer));
            recycler.put(std::move(*it));
            it = list.erase(it);
            any = true;
        }
        return any;
    }
};

}  // namespace mpix::sparse::detail
