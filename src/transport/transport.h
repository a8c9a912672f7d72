// The transport seen by the algorithms: send an active message to a peer of the group, receive
// inbound messages through a sink, fetch rendezvous payloads into a chosen buffer, progress, and wait
// for events without spinning. transport/ucx implements it over UCP; the unit tests implement it in
// memory, so the streaming algorithm can be tested without a launcher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "transport/wire_format.h"

namespace mpix::sparse::detail {

// Counts operations in flight; each completes by decrementing `pending`. A failure is kept.
struct Completion {
    int pending = 0;
    bool failed = false;
    std::string failure;
    bool done() const { return pending == 0; }
};

class Transport;

inline constexpr std::size_t kPublishedWords = 512;  // 4 KiB

// A message as it arrived. Its payload is either here (`data`, valid until released) or still at
// the sender (rendezvous: fetch() it into a buffer of `bytes` bytes).
// Ownership of the payload (handle, storage) moves with the message: a moved-from message holds none,
// so releasing it as well (say, what remains of a container after a step threw) frees nothing twice.
// Header, data and bytes stay readable in both.
struct InboundMessage {
    WireHeader header{};
    const std::byte *data = nullptr;
    std::size_t bytes = 0;
    bool rendezvous = false;
    // `data` lies in memory its sender can still write (a peer's shared segment): what decides where
    // the receiver writes (packed block numbers) must be copied out before it is checked.
    bool sender_writable = false;
    void *handle = nullptr;    // transport-owned descriptor (released by fetch() or release())
    std::uint8_t storage = 0;  // how the transport holds the payload (transport-private)

    InboundMessage() = default;
    InboundMessage(const InboundMessage &) = delete;
    InboundMessage &operator=(const InboundMessage &) = delete;
    InboundMessage(InboundMessage &&other) noexcept { *this = std::move(other); }
    InboundMessage &operator=(InboundMessage &&other) noexcept {
        header = other.header;
        data = other.data;
        bytes = other.bytes;
        rendezvous = other.rendezvous;
        sender_writable = other.sender_writable;
        handle = std::exchange(other.handle, nullptr);
        storage = std::exchange(other.storage, std::uint8_t{0});
        return *this;
    }
};

// Receives messages for one context (one sparse communicator).
class MessageSink {
  public:
    virtual ~MessageSink() = default;
    // Takes ownership of the message: it must eventually be fetched or released.
    virtual void on_message(InboundMessage &&message) = 0;
};

class Transport {
  public:
    virtual ~Transport() = default;

    // Sends header + payload to `peer` (a rank of the group that the links were made for). The
    // payload must stay untouched until `done` drops back. Bytes are added to *bytes_sent.
    virtual void send(int peer, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done) = 0;
    // Sends one payload to several peers (a result to every worker). A transport that shares memory
    // with them stores it once for all.
    virtual void send_to(const int *peers, std::size_t n, const WireHeader &header, const void *payload,
                         std::size_t bytes, Completion &done) {
        for (std::size_t i = 0; i < n; ++i)
            send(peers[i], header, payload, bytes, done);
    }
    // Memory for a payload to `peers` that they read where it is (sending from it copies nothing),
    // valid until recycle_shared(); null when this transport shares none with them.
    virtual std::byte *shared_buffer(const int * /*peers*/, std::size_t /*n*/, std::size_t /*bytes*/) {
        return nullptr;
    }
    // True when every one of `peers` reads [payload, payload + bytes) where it is (memory from
    // MPIX_Sparse_alloc_mem on this machine): sending it copies nothing. The caller keeps it
    // untouched until its operation's closing barrier.
    virtual bool shares_in_place(const int * /*peers*/, std::size_t /*n*/, const void * /*payload*/,
                                 std::size_t /*bytes*/) {
        return false;
    }
    // True when [payload, payload + bytes) is such memory, whichever peers would read it (the kind
    // of a call's buffers, for what the call's time is learned under).
    virtual bool in_place_memory(const void * /*payload*/, std::size_t /*bytes*/) const { return false; }
    // Words this rank publishes to the peers it shares memory with (kPublishedWords of them, in that
    // memory, kept across operations), or null; and those of `peer` as mapped here, read-only, or null.
    // Accessed with atomic loads and stores only (algo/result_ring.h says what they hold).
    virtual std::uint64_t *published_words() { return nullptr; }
    virtual const std::uint64_t *peer_published_words(int /*peer*/) { return nullptr; }
    // The last shared_buffer() used only `used` bytes (any other pointer: nothing happens).
    virtual void trim_shared(const std::byte * /*buffer*/, std::size_t /*used*/) {}
    // Every peer has read all that this rank sent so far (an operation's closing barrier says so):
    // shared memory may be reused.
    virtual void recycle_shared() {}
    // Moves a rendezvous payload into dest (message.bytes long); `done` tracks it.
    virtual void fetch(InboundMessage &message, void *dest, Completion &done) = 0;
    // Gives back a message's resources (eager data, or an unwanted rendezvous payload).
    virtual void release(InboundMessage &message) = 0;

    // Makes progress on everything in flight; true when anything happened.
    virtual bool progress() = 0;
    // Blocks until an event may have arrived (or a short timeout), without burning the CPU that other
    // ranks on the same core need. Only called after progress() returned false.
    virtual void wait() = 0;

    // A peer known to be gone (its process exited, or its endpoint failed), or -1. Cheap enough for
    // a watchdog to call twice a second.
    virtual int unreachable_peer() { return -1; }
    // How `peer` was found gone (for error messages).
    virtual std::string describe_peer(int) const { return {}; }
};

}  // namespace mpix::sparse::detail
