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

// Records what is sent. A rendezvous fetch either fails the way a transport error does (by throwing)
// or is accepted and never completes (the data is on its way).
class RecordingLinks final : public Transport {
  public:
    explicit RecordingLinks(bool refuse_fetches) : refuse_fetches_(refuse_fetches) {}
    void send(int peer, const WireHeader &header, const void *, std::size_t, Completion &) override {
        sent.emplace_back(peer, header);
    }
    void fetch(InboundMessage &, void *, Completion &) override {
        if (refuse_fetches_) throw Error(ErrorId::TransportFailure, "fetch refused (test)");
    }
    void release(InboundMessage &message) override { message.handle = nullptr; }
    bool progress() override { return false; }
    void wait() override {}

    std::vector<std::pair<int, WireHeader>> sent;

  private:
    bool refuse_fetches_;
};

// Operation 0's contribution of `worker` (of `workers`) to aggregator 0, which holds all 10 blocks of
// a 40-element vector: one packed block, its data fetched by rendezvous from *descriptor.
InboundMessage contribution(std::uint32_t worker, std::uint32_t workers, int *descriptor) {
    InboundMessage m;
    m.header.kind = MessageKind::Contribution;
    m.header.context = 7;
    m.header.seq = 0;
    m.header.sender = worker;
    m.header.count = 40;
    m.header.block_elems = 4;
    m.header.num_workers = workers;
    m.header.shard_lo = 0;
    m.header.shard_hi = 10;
    m.header.begin = 0;
    m.header.end = 10;
    m.header.nblocks = 1;
    m.rendezvous = true;
    m.bytes = 16;
    m.handle = descriptor;
    return m;
}

TEST(DedicatedAggregator, AFailedStepFailsItsOperationAndTheServiceGoesOn) {
    Group group;
    group.size = 2;
    group.rank = 0;
    group.aggregators = {0};
    group.workers = {1};
    group.dedicated = true;
    group.fanout.direct = {1};
    DedicatedAggregator service(Config{}, group);
    RecordingLinks links(true);
    service.set_links(7, &links);

    int payload = 0;  // stands for the sender's rendezvous descriptor
    service.on_message(contribution(0, 1, &payload));
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

// A malformed message that arrives before its operation starts here fails that operation when its
// other workers' contributions start it (its workers are told), not a later one or none.
TEST(DedicatedAggregator, AMalformedMessageFailsTheOperationItNamesWhenItStarts) {
    Group group;
    group.size = 3;
    group.rank = 0;
    group.aggregators = {0};
    group.workers = {1, 2};
    group.dedicated = true;
    group.fanout.direct = {1, 2};
    DedicatedAggregator service(Config{}, group);
    RecordingLinks links(false);
    service.set_links(7, &links);

    int payload = 0;
    InboundMessage bad = contribution(0, 2, &payload);
    bad.header.end = 11;  // outside the shard
    service.on_message(std::move(bad));
    InboundMessage good = contribution(1, 2, &payload);
    good.header.flags = kDenseRun;  // block 0, 16 bytes
    good.header.first = 0;
    service.on_message(std::move(good));
    for (int i = 0; i < 10; ++i)
        ASSERT_NO_THROW(service.progress()) << "step " << i;
    // Both workers learn that operation 0 failed here.
    ASSERT_EQ(links.sent.size(), 2u);
    for (const auto &[peer, header] : links.sent) {
        EXPECT_EQ(header.kind, MessageKind::Abort) << "to " << peer;
        EXPECT_EQ(header.seq, 0u) << "to " << peer;
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
