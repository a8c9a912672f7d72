// Memory a communicator keeps between streamed reductions so that steady-state calls allocate
// nothing: staging buffers, message records, and the aggregator's window scratch.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "algo/buffer_pool.h"
#include "algo/message_cursor.h"
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
    BufferPool::Buffer buffer;  // where a rendezvous payload (or a realigned eager one) lives
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
        if (spare_.empty()) return std::make_unique<T>();
        std::unique_ptr<T> p = std::move(spare_.back());
        spare_.pop_back();
        return p;
    }
    void put(std::unique_ptr<T> p) {
        if (!p) return;
        *p = T{};
        spare_.push_back(std::move(p));
    }

  private:
    std::vector<std::unique_ptr<T>> spare_;
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
    std::vector<std::byte> window;            // aggregator accumulator when not reducing in place
    std::vector<std::uint32_t> counts;        // contributors per window block
    std::vector<std::uint64_t> touched;       // window blocks with a contribution (one bit each)
    std::vector<std::uint32_t> union_;        // window positions with a contribution
    std::vector<std::uint32_t> plan_index;    // worker's message plan scratch
    std::vector<std::uint32_t> result_index;  // aggregator's packed result block numbers

    void drain(std::unique_ptr<OutboundMessage> m) { draining.push_back(std::move(m)); }
    void drain(std::unique_ptr<InboundPiece> p) { draining_pieces.push_back(std::move(p)); }
    // Recycles what completed; true when nothing is left draining.
    bool reap() {
        for (auto it = draining.begin(); it != draining.end();) {
            if (!(*it)->sent.done()) {
                ++it;
                continue;
            }
            buffers.release(std::move((*it)->buffer));
            outbound.put(std::move(*it));
            it = draining.erase(it);
        }
        for (auto it = draining_pieces.begin(); it != draining_pieces.end();) {
            if (!(*it)->fetch.done()) {
                ++it;
                continue;
            }
            buffers.release(std::move((*it)->buffer));
            inbound.put(std::move(*it));
            it = draining_pieces.erase(it);
        }
        return draining.empty() && draining_pieces.empty();
    }
};

}  // namespace mpix::sparse::detail
