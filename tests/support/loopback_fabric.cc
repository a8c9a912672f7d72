#include "loopback_fabric.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace mpix::sparse::detail::testing {

struct LoopbackFabric::Held {
    const std::byte *data;
    Completion *sender_done;
};

enum : std::uint8_t { kEager = 1, kRendezvous = 2 };

class LoopbackFabric::Endpoint final : public Transport {
  public:
    Endpoint(LoopbackFabric &fabric, int rank) : fabric_(fabric), rank_(rank) {}

    void send(int peer, const WireHeader &header, const void *payload, std::size_t bytes, Completion &done) override {
        InboundMessage m;
        m.header = header;
        m.bytes = bytes;
        if (bytes <= fabric_.eager_limit_) {
            if (bytes > 0) {
                // Deliberately misaligned by 4 bytes half of the time: receivers must cope.
                auto *copy = new std::byte[bytes + 8];
                const std::size_t shift = (fabric_.rng_() & 1) ? 4 : 0;
                std::memcpy(copy + shift, payload, bytes);
                m.data = copy + shift;
                m.handle = copy;
                m.storage = kEager;
                ++fabric_.live_payloads_;
            }
        } else {
            ++done.pending;
            m.rendezvous = true;
            m.handle = new Held{static_cast<const std::byte *>(payload), &done};
            m.storage = kRendezvous;
            ++fabric_.live_payloads_;
        }
        fabric_.queues_.at(static_cast<std::size_t>(peer)).push_back(std::move(m));
    }

    void fetch(InboundMessage &message, void *dest, Completion &) override {
        if (message.storage != kRendezvous) throw std::logic_error("fetch of an eager message");
        auto *held = static_cast<Held *>(message.handle);
        std::memcpy(dest, held->data, message.bytes);
        --held->sender_done->pending;
        delete held;
        message.handle = nullptr;
        message.storage = 0;
        --fabric_.live_payloads_;
    }

    void release(InboundMessage &message) override {
        if (message.handle == nullptr) return;
        if (message.storage == kEager) {
            delete[] static_cast<std::byte *>(message.handle);
        } else if (message.storage == kRendezvous) {
            auto *held = static_cast<Held *>(message.handle);
            --held->sender_done->pending;
            delete held;
        }
        message.handle = nullptr;
        message.storage = 0;
        --fabric_.live_payloads_;
    }

    bool progress() override {
        auto &queue = fabric_.queues_[static_cast<std::size_t>(rank_)];
        if (queue.empty()) return false;
        // Deliver one random queued message: arrival order differs from send order.
        std::uniform_int_distribution<std::size_t> pick(0, queue.size() - 1);
        const std::size_t i = pick(fabric_.rng_);
        InboundMessage m = std::move(queue[i]);
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
        fabric_.sinks_[static_cast<std::size_t>(rank_)](std::move(m));
        return true;
    }

    void wait() override {}

  private:
    LoopbackFabric &fabric_;
    int rank_;
};

LoopbackFabric::LoopbackFabric(int ranks, std::size_t eager_limit, unsigned seed)
    : queues_(static_cast<std::size_t>(ranks)), sinks_(static_cast<std::size_t>(ranks)), eager_limit_(eager_limit),
      rng_(seed) {
    for (int r = 0; r < ranks; ++r)
        transports_.push_back(std::make_unique<Endpoint>(*this, r));
}

LoopbackFabric::~LoopbackFabric() {
    for (std::size_t r = 0; r < queues_.size(); ++r)
        for (InboundMessage &m : queues_[r])
            transports_[r]->release(m);
}

Transport &LoopbackFabric::transport(int rank) {
    return *transports_[static_cast<std::size_t>(rank)];
}

void LoopbackFabric::set_sink(int rank, std::function<void(InboundMessage &&)> sink) {
    sinks_[static_cast<std::size_t>(rank)] = std::move(sink);
}

std::size_t LoopbackFabric::outstanding() const {
    return live_payloads_;
}

}  // namespace mpix::sparse::detail::testing
