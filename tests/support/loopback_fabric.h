// An in-memory fabric for unit tests: P ranks in one thread, each with a Transport. Payloads up to
// eager_limit bytes are copied at send (eager); larger ones stay at the sender until the receiver
// fetches them (rendezvous), and only then complete the sender's send, as with UCX. Delivery order is
// shuffled by a seeded generator, so tests exercise out-of-order arrival.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "transport/transport.h"

namespace mpix::sparse::detail::testing {

class LoopbackFabric {
  public:
    LoopbackFabric(int ranks, std::size_t eager_limit, unsigned seed);
    ~LoopbackFabric();

    Transport &transport(int rank);
    // Where rank's inbound messages go.
    void set_sink(int rank, std::function<void(InboundMessage &&)> sink);
    // Messages still queued or payloads not yet fetched/released (0 when everything was consumed).
    std::size_t outstanding() const;

  private:
    class Endpoint;
    struct Held;  // a rendezvous payload waiting at its sender

    std::vector<std::unique_ptr<Endpoint>> transports_;
    std::vector<std::deque<InboundMessage>> queues_;
    std::vector<std::function<void(InboundMessage &&)>> sinks_;
    std::size_t eager_limit_;
    std::mt19937 rng_;
    std::size_t live_payloads_ = 0;
};

}  // namespace mpix::sparse::detail::testing
