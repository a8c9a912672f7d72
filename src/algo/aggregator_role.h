// The aggregator's side of a streamed reduction (OmniReduce's aggregator): it receives every worker's
// stream of non-zero blocks for its shard, reduces a window as soon as every stream has moved past it
// (each message says how far its sender's stream reaches), and streams the union back to all workers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algo/contribution_source.h"
#include "algo/op_counters.h"
#include "algo/result_ring.h"
#include "algo/result_sink.h"
#include "algo/stream_resources.h"
#include "algo/stream_spec.h"
#include "algo/window_reducer.h"
#include "core/operation.h"
#include "core/reduce_kernels.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

class WorkerRole;

class AggregatorRole {
  public:
    // `own` and `own_sink` are this rank's worker data and output when it is also a worker
    // (colocated), else null; `own_worker` then learns of results delivered locally.
    // It aggregates shard spec.my_aggregator.
    AggregatorRole(const StreamSpec &spec, Transport &transport, StreamResources &resources, OpCounters &counters,
                   const ContributionSource *own, ResultSink *own_sink, WorkerRole *own_worker);
    ~AggregatorRole();
    AggregatorRole(const AggregatorRole &) = delete;
    AggregatorRole &operator=(const AggregatorRole &) = delete;

    // Starts over for the spec's current shard bounds (a persistent request's next start), keeping
    // the containers' memory.
    void restart();
    // Lets go of what the transport may still hold (pieces back, result sends to the drain lists,
    // where they are reaped as they complete), so that an idle operation kept for its next start
    // holds nothing.
    void park();
    // A contribution message whose header was checked against the operation.
    void on_contribution(InboundMessage &&message);
    // Reduces and sends what it can without waiting; true when anything happened.
    bool advance();
    bool done() const;
    // The most result sends and pieces it has in flight at once (its lists are reserved to that
    // bound, and grow only if peers overrun it): what a restart may move to the drain lists.
    std::size_t sends_bound() const { return in_flight_.capacity(); }
    std::size_t pieces_bound() const {
        std::size_t n = 0;
        for (const Stream &s : streams_)
            n += s.pieces.capacity();  // reserved to the window; more if a peer overran it
        return n;
    }
    const OpError &error() const { return error_; }
    // What it is waiting for (diagnostics of a stalled operation).
    std::string describe() const;

  private:
    struct Stream {
        std::vector<std::unique_ptr<InboundPiece>> pieces;  // sorted by header.begin
        std::uint64_t next_begin = 0;                       // where the first kept piece must begin
    };

    void fail(ErrorId id, const std::string &what);
    bool make_ready(InboundPiece &piece);
    bool poll_fetches();
    std::uint64_t covered(const Stream &s) const;
    std::uint64_t frontier() const;
    std::uint64_t next_block(std::uint64_t from, std::uint64_t limit) const;
    // Makes this rank's output final over [written_to_, end) (writes_own_): zeros where no block of
    // the window's u union entries is, and the union blocks from `window` (null: reduced there in
    // place already); the window starts at base.
    void write_own(std::uint64_t base, std::uint64_t end, std::size_t u, const std::byte *window);
    void reduce_window(std::uint64_t base, std::uint64_t end);
    void emit_dense(std::uint64_t base, const std::byte *acc, std::size_t from, std::size_t to,
                    std::uint64_t cover_end);
    void append_packed(std::uint64_t block, std::size_t count, const std::byte *data);
    void append_packed_elements(std::uint64_t base, const std::byte *acc, std::size_t from, std::size_t to);
    void flush_pending(std::uint64_t end);
    // A result payload's memory, shared with every remote worker when possible.
    std::byte *result_buffer(OutboundMessage &message, std::size_t bytes);
    // The next slot of the result ring for a payload of `bytes`, marked in h (ring_slot, ring_use;
    // 0 when none): null when there is no ring, the payload is too large, or the slot is still read.
    std::byte *result_slot(WireHeader &h, std::size_t bytes);
    void plan_result_ring();
    void finish_result(std::unique_ptr<OutboundMessage> message, const std::byte *payload, std::size_t bytes,
                       std::uint64_t cover_end);
    void send_to_workers(std::unique_ptr<OutboundMessage> message, const std::byte *payload, std::size_t bytes);
    void send_coverage(std::uint64_t end);
    void release_consumed();
    bool reap_sends();
    WireHeader result_header(std::uint64_t begin, std::uint64_t end) const;

    const StreamSpec &spec_;
    std::uint64_t lo_ = 0, hi_ = 0;
    Transport &transport_;
    StreamResources &res_;
    OpCounters &counters_;
    const ContributionSource *own_;
    ResultSink *own_sink_;
    WorkerRole *own_worker_;
    const ReduceKernels &kernels_;

    std::vector<Stream> streams_;    // by worker index; this rank's own entry stays empty
    std::uint64_t done_ = 0;         // blocks below this are reduced and sent
    std::uint64_t cover_start_ = 0;  // results sent so far cover [lo_, cover_start_)
    std::uint64_t window_blocks_;    // most blocks reduced at once
    WindowReducer reducer_;
    bool in_place_ = false;       // reducing straight into this rank's dense output
    bool output_shared_ = false;  // the workers read this rank's dense output in place (written by write_own)
    // This rank writes its own dense output as it reduces (write_own), not from its result messages:
    // the union from the cache-resident window and the zeros around it. Blocks [lo_, written_to_) of
    // it are final.
    bool writes_own_ = false;
    std::uint64_t written_to_ = 0;
    // The packed result being filled (union blocks of several windows, sent when full or at the
    // frontier): it covers [cover_start_, ...).
    std::unique_ptr<OutboundMessage> pending_;
    std::byte *pending_data_ = nullptr;  // its payload: in its pooled buffer, or in shared memory
    std::size_t pending_n_ = 0, pending_bytes_ = 0;
    // Its blocks are copied with streaming stores (not into a result ring slot: header.ring_use).
    bool stream_packed_ = false;
    // The result ring (result_ring.h): ring_slots_ slots of ring_slot_bytes_ in shared memory, taken
    // at the operation's first result in it; each slot's latest use; the remote workers' published
    // marks. ring_slots_ 0: no ring this operation.
    std::byte *ring_ = nullptr;
    std::size_t ring_slots_ = 0, ring_slot_bytes_ = 0;
    std::uint32_t ring_uses_ = 0;
    std::array<std::uint32_t, kRingMarkSlots> ring_last_{};
    std::vector<const std::uint64_t *> ring_readers_;
    std::vector<int> remote_workers_;  // group ranks of the workers other than this rank
    std::vector<std::unique_ptr<OutboundMessage>> in_flight_;
    OpError error_;
};

}  // namespace mpix::sparse::detail
