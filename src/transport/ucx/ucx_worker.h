// The process's own UCP context and worker, shared by every sparse communicator of the process (never
// Open MPI's): one active-message handler, endpoints cached by peer address, progress, and arming the
// worker's event file descriptor so that an idle thread can sleep on it instead of spinning. Not
// thread-safe by itself: the library calls it under its engine lock.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "transport/shared_segment.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

// Who a process is, as far as telling it is gone goes: its pid, and a key of the process table it
// lives in (boot id and pid namespace). Peers that share the key are checked with kill(pid, 0).
struct PeerIdentity {
    std::uint64_t machine = 0;  // 0: unknown (never matches)
    std::int64_t pid = 0;
};
PeerIdentity local_identity();

// A by-reference message (header with kByReference, and where the payload is) as UCX sends it: it
// must stay untouched until every send of it completed, so it lives here, never in the segment.
struct ReferenceMessage {
    WireHeader header;
    SegmentRef ref;
    Completion *outer = nullptr;  // the caller's completion, which every send of it joins
    int pending = 0;              // its sends UCX has not completed
};

class UcxWorker {
  public:
    // Where inbound messages go; called inside progress().
    using Router = std::function<void(InboundMessage &&)>;

    // Reads UCX configuration with the MPIX_SPARSE prefix (MPIX_SPARSE_UCX_TLS=... or UCX_TLS=...).
    explicit UcxWorker(Router router);
    ~UcxWorker();
    UcxWorker(const UcxWorker &) = delete;
    UcxWorker &operator=(const UcxWorker &) = delete;

    const std::vector<char> &address() const { return address_; }
    // The endpoint to the worker at `address`, created on first use. With `report_failure`, UCX
    // reports the peer's failure on it (UCP_ERR_HANDLING_MODE_PEER): used for peers on other
    // machines only, as on shared memory it costs half the bandwidth (measured: docs/reliability.md),
    // and there kill(pid, 0) tells the same for free.
    ucp_ep_h endpoint(const std::string &address, bool report_failure);
    bool has_endpoint(const std::string &address) const { return endpoints_.count(address) != 0; }
    // The failure UCX reported on `ep`, or null.
    const char *endpoint_failure(ucp_ep_h ep) const;

    // Warming UCX's shared-memory path to new peers of this machine. A sender writes each message into
    // the buffer of one slot of the receiver's FIFO, a page of the receiver's memory that the sender
    // maps on first touch; the slots are used in turn, so with a few messages a call it takes
    // ~100 calls to touch them all, each slowed by page faults (measured: 256 KiB at 10% took
    // 2x its steady time for ~80 calls; docs/performance.md). A communicator's set-up sends
    // warm_up_messages() to each new peer of its machine instead, and waits for theirs:
    // begin_warm_up before any peer may send them, end_warm_up once done (later ones are dropped).
    static int warm_up_messages();
    void begin_warm_up(std::uint32_t context);
    void send_warm_ups(std::uint32_t context, ucp_ep_h ep);
    // True when all of this rank's warm-ups went out and `expected` arrived for context.
    bool warmed_up(std::uint32_t context, int expected) const;
    void end_warm_up(std::uint32_t context);

    void send(ucp_ep_h ep, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done);
    // Sends m (header and reference) to ep; m.outer and m.pending track it.
    void send_reference(ucp_ep_h ep, ReferenceMessage &m);
    // Peers' shared-memory segments: by-reference payloads are resolved on arrival, so what the
    // router gets is an ordinary message whose data lies in the sender's segment.
    PeerSegments &peer_segments() { return peer_segments_; }
    void fetch(InboundMessage &message, void *dest, Completion &done);
    void release(InboundMessage &message);
    bool progress();
    // Arms the worker for a sleep: the event fd to poll, kBusy when events are already pending (go
    // and progress them), or -1 when the transports cannot wake us (yield instead).
    static constexpr int kBusy = -2;
    int arm();

  private:
    static ucs_status_t on_active_message(void *arg, const void *header, std::size_t header_length, void *data,
                                          std::size_t length, const ucp_am_recv_param_t *param);
    static void on_endpoint_error(void *arg, ucp_ep_h ep, ucs_status_t status);

    Router router_;
    ucp_context_h context_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    std::vector<char> address_;
    std::map<std::string, ucp_ep_h> endpoints_;
    int event_fd_ = -1;                      // -1: the transports cannot wake us; yield instead
    int callback_depth_ = 0;                 // inside on_active_message (UCX owns eager data until it returns)
    std::vector<void *> deferred_releases_;  // eager data released from inside the callback
    std::map<ucp_ep_h, ucs_status_t> failed_endpoints_;
    struct WarmUp {
        WireHeader header;
        SegmentRef payload{};  // the size of a by-reference payload, so that UCX takes the same protocol
        Completion sent;
        int received = 0;
    };
    std::map<std::uint32_t, std::unique_ptr<WarmUp>> warm_ups_;  // by context, while it warms up
    PeerSegments peer_segments_;
};

// The Transport of one communicator: group rank -> endpoint (and who is there, to tell it is gone).
// With a shared segment, large payloads to peers of this machine (`sharing`) travel by reference.
class UcxLinks final : public Transport {
  public:
    UcxLinks(UcxWorker &worker, std::uint32_t context, std::vector<ucp_ep_h> endpoints, std::vector<PeerIdentity> peers,
             std::unique_ptr<SharedSegment> segment, std::vector<bool> sharing,
             std::vector<const std::byte *> peer_headers)
        : worker_(worker), context_(context), endpoints_(std::move(endpoints)), peers_(std::move(peers)),
          self_(local_identity()), segment_(std::move(segment)), sharing_(std::move(sharing)),
          peer_headers_(std::move(peer_headers)) {}
    ~UcxLinks() override;
    UcxLinks(const UcxLinks &) = delete;
    UcxLinks &operator=(const UcxLinks &) = delete;

    void send(int peer, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done) override;
    void send_to(const int *peers, std::size_t n, const WireHeader &header, const void *payload, std::size_t bytes,
                 Completion &done) override;
    std::byte *shared_buffer(const int *peers, std::size_t n, std::size_t bytes) override;
    bool shares_in_place(const int *peers, std::size_t n, const void *payload, std::size_t bytes) override;
    bool in_place_memory(const void *payload, std::size_t bytes) const override;
    std::uint64_t *published_words() override;
    const std::uint64_t *peer_published_words(int peer) override;
    void trim_shared(const std::byte *buffer, std::size_t used) override {
        if (segment_) segment_->trim(buffer, used);
    }
    void recycle_shared() override {
        if (segment_) segment_->recycle();
        worker_.peer_segments().release_stale(context_);
    }
    void fetch(InboundMessage &message, void *dest, Completion &done) override { worker_.fetch(message, dest, done); }
    void release(InboundMessage &message) override { worker_.release(message); }
    bool progress() override { return worker_.progress(); }
    // The library's progress engine sleeps on the worker; a caller of this interface just yields.
    void wait() override;
    int unreachable_peer() override;
    std::string describe_peer(int peer) const override;

  private:
    bool shares_with(int peer) const { return segment_ && sharing_[static_cast<std::size_t>(peer)]; }
    bool shares_with_all(const int *peers, std::size_t n) const;
    // The message carrying [payload, payload + bytes) by reference: where it is when it lies in this
    // rank's segment or in an MPIX_Sparse_alloc_mem allocation, else copied into the segment first;
    // null when it does not fit there (then it goes through UCX).
    ReferenceMessage *by_reference(const WireHeader &header, const void *payload, std::size_t bytes, Completion &done);

    UcxWorker &worker_;
    std::uint32_t context_;
    std::vector<ucp_ep_h> endpoints_;
    std::vector<PeerIdentity> peers_;
    PeerIdentity self_;
    std::unique_ptr<SharedSegment> segment_;  // null: nothing is sent by reference
    std::vector<bool> sharing_;               // by group rank: a peer that maps this rank's segment
    // By group rank: the header of a sharing peer's segment as mapped here (while the links live).
    std::vector<const std::byte *> peer_headers_;
    // By-reference messages, reused once UCX completed every send of one.
    std::vector<std::unique_ptr<ReferenceMessage>> references_;
};

}  // namespace mpix::sparse::detail
