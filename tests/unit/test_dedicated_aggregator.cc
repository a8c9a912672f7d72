// The dedicated aggregator's service, without MPI: a failure inside one of its steps must fail the
// operation it serves (whose workers are told) and leave the service running, never escape to the
// progress engine, where the progress thread would terminate the process.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "algo/dedicated_aggregator.h"
#include "core/error.h"

namespace mpix::sparse::detail {
namespace {

// Records what is sent; a rendezvous fetch fails the way a transport error does (by throwing).
class FailingFetches final : public Transport {
  public:
    void send(int peer, const WireHeader &header, const void *, std::size_t, Completion &) override {
        sent.emplace_back(peer, header);
    }
    void fetch(InboundMessage &, void *, Completion &) override {
        throw Error(ErrorId::TransportFailure, "fetch refused (test)");
    }
    void release(InboundMessage &message) override { message.handle = nullptr; }
    bool progress() override { return false; }
    void wait() override {}

    std::vector<std::pair<int, WireHeader>> sent;
};

TEST(DedicatedAggregator, AFailedStepFailsItsOperationAndTheServiceGoesOn) {
    Group group;
    group.size = 2;
    group.rank = 0;
    group.aggregators = {0};
    group.workers = {1};
    group.dedicated = true;
    group.fanout.direct = {1};
    DedicatedAggregator service(Config{}, group);
    FailingFetches links;
    service.set_links(7, &links);

    int payload = 0;  // stands for the sender's rendezvous descriptor
    InboundMessage m;
    m.header.kind = MessageKind::Contribution;
    m.header.context = 7;
    m.header.seq = 0;
    m.header.sender = 0;  // worker 0
    m.header.count = 40;
    m.header.block_elems = 4;
    m.header.num_workers = 1;
    m.header.shard_lo = 0;
    m.header.shard_hi = 10;
    m.header.begin = 0;
    m.header.end = 10;
    m.header.nblocks = 1;
    m.rendezvous = true;
    m.bytes = 16;
    m.handle = &payload;
    service.on_message(std::move(m));
    for (int i = 0; i < 10; ++i)
        ASSERT_NO_THROW(service.progress()) << "step " << i;
    // The worker learns that operation 0 failed here.
    ASSERT_EQ(links.sent.size(), 1u);
    EXPECT_EQ(links.sent[0].first, 1);
    EXPECT_EQ(links.sent[0].second.kind, MessageKind::Abort);
    EXPECT_EQ(links.sent[0].second.seq, 0u);
    // The operation is over: once the worker leaves, so does the service.
    InboundMessage goodbye;
    goodbye.header.kind = MessageKind::Goodbye;
    goodbye.header.context = 7;
    goodbye.header.sender = 0;
    service.on_message(std::move(goodbye));
    EXPECT_TRUE(service.finished());
}

}  // namespace
}  // namespace mpix::sparse::detail
