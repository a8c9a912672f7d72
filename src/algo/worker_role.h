// The worker's side of a streamed reduction: it streams its non-zero blocks of each shard to that
// shard's aggregator in bounded messages (at most `window` unanswered per aggregator; the results
// coming back are the credits) and writes the results it receives into its output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algo/contribution_source.h"
#include "algo/coverage.h"
#include "algo/op_counters.h"
#include "algo/result_sink.h"
#include "algo/stream_resources.h"
#include "algo/stream_spec.h"
#include "core/operation.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

class WorkerRole {
  public:
    WorkerRole(const StreamSpec &spec, Transport &transport, StreamResources &resources, OpCounters &counters,
               const ContributionSource &source, ResultSink &sink);
    ~WorkerRole();
    WorkerRole(const WorkerRole &) = delete;
    WorkerRole &operator=(const WorkerRole &) = delete;

    // Starts over for the spec's current shard bounds (a persistent request's next start), keeping
    // the containers' memory.
    void restart();
    // Lets go of what the transport may still hold (sends, fetches: to the drain lists, where they
    // are reaped as they complete), so that an idle operation kept for its next start holds nothing.
    void park();
    // A result message whose header was checked against the operation.
    void on_result(InboundMessage &&message);
    // Results [begin, end) of this rank's own aggregator (colocated) are in the output.
    void local_result(std::uint64_t begin, std::uint64_t end);
    // Sends and stores what it can without waiting; true when anything happened.
    bool advance();
    bool done() const;
    // The most sends and fetches it has in flight at once (its lists are reserved to that bound): what
    // a restart may move to the drain lists.
    std::size_t sends_bound() const { return in_flight_.capacity(); }
    std::size_t fetches_bound() const { return fetches_.capacity(); }
    // After a failure: completes the fetches still in flight (some write into the output), true when
    // none is left, so that nothing writes into the caller's memory after the call returns.
    bool settle_fetches();
    const OpError &error() const { return error_; }
    // What it is waiting for (diagnostics of a stalled operation).
    std::string describe() const;

  private:
    struct Shard {
        int aggregator = 0;
        std::uint64_t next = 0;  // where the next contribution message starts
        std::uint64_t hi = 0;
        std::vector<std::uint64_t> unacked;  // coverage ends of messages not yet answered
        Coverage results;
        // Workers of this node that this rank passes the shard's results on to (node multicast).
        const std::vector<int> *forward = nullptr;
        // The aggregator reads this rank's dense input where it is (MPIX_Sparse_alloc_mem memory).
        bool gaps_in_place = false;
        // Slots of shared memory that dense runs of a large vector are copied through (ring_slot).
        std::byte *ring = nullptr;
        std::uint64_t ring_next = 0;  // runs copied through the ring so far
        bool no_ring = false;         // none to be had this call
    };

    void fail(ErrorId id, const std::string &what);
    bool send_contributions(Shard &shard);
    // Where a dense run of `bytes` from the user's buffer goes for the shard's aggregator to read:
    // the next slot of the shard's ring, or null (too large, or no shared memory).
    std::byte *ring_slot(Shard &shard, std::size_t bytes);
    // Publishes that this rank has read a result from its aggregator's result ring (result_ring.h).
    void release_ring_slot(const WireHeader &h);
    [[noreturn]] void exit_after_sends();
    bool poll_fetches();
    // Stores (and forwards) a result whose fetch completed.
    void store_fetched(InboundPiece &piece);
    bool reap_sends();
    // Where a result's payload is, for passing it on: the transport's (valid during the call), in a
    // pooled buffer this rank may hand over, or in shared memory the node's workers read in place.
    enum class PayloadHome { Transient, Owned, Shared };
    // Checks a result, passes it on to the node's workers when this rank forwards the shard (taking
    // `owned` when the payload is Owned), writes it into the output. sender_writable: the payload
    // lies where its sender can still write it (InboundMessage::sender_writable).
    void store_result(const WireHeader &h, const std::byte *payload, std::size_t bytes,
                      PayloadHome home = PayloadHome::Transient, BufferPool::Buffer *owned = nullptr,
                      bool sender_writable = false);
    void forward_result(const Shard &shard, const WireHeader &h, const std::byte *payload, std::size_t bytes,
                        PayloadHome home, BufferPool::Buffer *owned);
    // Writes a checked result into the output (timed as ResultWrite) and records its coverage.
    void write_result(const WireHeader &h, const MessageView &view);
    void result_covered(int aggregator, std::uint64_t begin, std::uint64_t end);

    const StreamSpec &spec_;
    Transport &transport_;
    StreamResources &res_;
    OpCounters &counters_;
    const ContributionSource &source_;
    ResultSink &sink_;
    std::vector<Shard> shards_;  // by aggregator index
    std::vector<std::unique_ptr<OutboundMessage>> in_flight_;
    std::vector<std::unique_ptr<InboundPiece>> fetches_;
    std::size_t shards_done_ = 0;
    bool injected_ = false;  // the test hook fired
    OpError error_;
};

}  // namespace mpix::sparse::detail
