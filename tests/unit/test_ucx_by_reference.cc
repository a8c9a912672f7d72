// Payloads by reference through the UCX transport, between two UCX workers of this process: a
// payload sent to two peers is stored once and arrives as an ordinary message whose data lies in
// the sender's segment; a reference that cannot be resolved arrives without a payload (which the
// algorithms' checks then reject), never as a pointer outside the segment.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "transport/shared_segment.h"
#include "transport/ucx/ucx_worker.h"

namespace mpix::sparse::detail {
namespace {

struct Received {
    std::vector<InboundMessage> messages;
};

class TwoWorkers : public ::testing::Test {
  protected:
    void SetUp() override {
        sender_ = std::make_unique<UcxWorker>([](InboundMessage &&) {});
        receiver_ = std::make_unique<UcxWorker>([this](InboundMessage &&m) { got_.messages.push_back(std::move(m)); });
        receiver_->peer_segments().open_context(42);  // as connect() does for its communicator
        const std::vector<char> &a = receiver_->address();
        ep_ = sender_->endpoint(std::string(a.begin(), a.end()), false);
    }
    void TearDown() override {
        for (InboundMessage &m : got_.messages)
            receiver_->release(m);
        got_.messages.clear();
    }
    // Progresses both workers until `n` messages arrived and the sends completed (or 10 s).
    void deliver(std::size_t n, const Completion &sent) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while ((got_.messages.size() < n || !sent.done()) && std::chrono::steady_clock::now() < deadline) {
            sender_->progress();
            receiver_->progress();
        }
        ASSERT_EQ(got_.messages.size(), n);
        ASSERT_TRUE(sent.done());
    }
    static WireHeader header() {
        WireHeader h;
        h.kind = MessageKind::Result;
        h.context = 42;
        h.flags = kDenseRun;
        return h;
    }

    std::unique_ptr<UcxWorker> sender_, receiver_;
    ucp_ep_h ep_ = nullptr;
    Received got_;
};

TEST_F(TwoWorkers, OnePayloadToTwoPeersIsStoredOnceAndReadInPlace) {
    auto segment = SharedSegment::create(std::size_t{8} << 20);
    ASSERT_TRUE(segment);
    SharedSegment *seg = segment.get();
    // Group ranks 1 and 2 are both the receiver worker; rank 0 (this one) has no endpoint.
    UcxLinks links(*sender_, 42, {nullptr, ep_, ep_}, std::vector<PeerIdentity>(3), std::move(segment),
                   {false, true, true}, std::vector<const std::byte *>(3));
    std::vector<std::byte> payload(100000);
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<std::byte>(i * 13);
    Completion sent;
    const int peers[] = {1, 2};
    const WireHeader h = header();
    links.send_to(peers, 2, h, payload.data(), payload.size(), sent);
    deliver(2, sent);
    for (const InboundMessage &m : got_.messages) {
        EXPECT_FALSE(m.rendezvous);
        EXPECT_EQ(m.header.flags, kDenseRun);  // the transport's flag is gone
        EXPECT_TRUE(m.sender_writable);        // the sender may still write its segment
        ASSERT_EQ(m.bytes, payload.size());
        ASSERT_NE(m.data, nullptr);
        EXPECT_EQ(std::memcmp(m.data, payload.data(), payload.size()), 0);
    }
    EXPECT_EQ(got_.messages[0].data, got_.messages[1].data);  // one copy for both
    // Packed in the segment in the first place: sent without a copy, from where it is.
    std::byte *in_place = links.shared_buffer(peers, 2, 20000);
    ASSERT_NE(in_place, nullptr);
    ASSERT_TRUE(seg->contains(in_place, 20000));
    std::memset(in_place, 0x3c, 20000);
    Completion again;
    links.send(1, h, in_place, 20000, again);
    deliver(3, again);
    EXPECT_EQ(got_.messages[2].bytes, 20000u);
    EXPECT_EQ(got_.messages[2].data[19999], std::byte{0x3c});
}

// The words a rank publishes lie in its segment's header, which peers map with the segment and
// which is never handed out as payload memory; a peer's are there only for peers sharing memory.
TEST_F(TwoWorkers, PublishedWordsAreTheSegmentHeaderAsPeersMapIt) {
    auto segment = SharedSegment::create(std::size_t{2} << 20);
    ASSERT_TRUE(segment);
    PeerSegments peer;
    peer.open_context(9);
    SegmentRef header = segment->ref(nullptr, 0);
    header.bytes = SharedSegment::kHeaderBytes;
    const std::byte *mapped = peer.resolve(header, 9);
    ASSERT_NE(mapped, nullptr);
    UcxLinks links(*sender_, 43, {nullptr, ep_, ep_}, std::vector<PeerIdentity>(3), std::move(segment),
                   {false, false, true}, {nullptr, mapped, mapped});
    std::uint64_t *mine = links.published_words();
    ASSERT_NE(mine, nullptr);
    __atomic_store_n(mine + kPublishedWords - 1, std::uint64_t{0x1234567890abcdef}, __ATOMIC_RELEASE);
    const int sharing = 2, not_sharing = 1;
    const std::uint64_t *theirs = links.peer_published_words(sharing);
    ASSERT_NE(theirs, nullptr);
    EXPECT_EQ(__atomic_load_n(theirs + kPublishedWords - 1, __ATOMIC_ACQUIRE), std::uint64_t{0x1234567890abcdef});
    EXPECT_EQ(links.peer_published_words(not_sharing), nullptr);
    // Payload memory starts after the header, also once recycled.
    for (int round = 0; round < 2; ++round) {
        std::byte *p = links.shared_buffer(&sharing, 1, 64);
        ASSERT_NE(p, nullptr);
        EXPECT_GE(p, reinterpret_cast<std::byte *>(mine) + SharedSegment::kHeaderBytes);
        std::memset(p, 0xff, 64);
        links.recycle_shared();
    }
    EXPECT_EQ(__atomic_load_n(theirs + kPublishedWords - 1, __ATOMIC_ACQUIRE), std::uint64_t{0x1234567890abcdef});
}

TEST_F(TwoWorkers, SmallPayloadsAndPeersWithoutSharingGoThroughUcx) {
    UcxLinks links(*sender_, 42, {nullptr, ep_, ep_}, std::vector<PeerIdentity>(3),
                   SharedSegment::create(std::size_t{8} << 20), {false, false, true},
                   std::vector<const std::byte *>(3));
    const int not_sharing = 1, sharing = 2;
    EXPECT_EQ(links.shared_buffer(&not_sharing, 1, 64), nullptr);
    EXPECT_NE(links.shared_buffer(&sharing, 1, 64), nullptr);
    // Eager sizes (a rendezvous would wait for a fetch this test does not make).
    std::vector<std::byte> payload(4000, std::byte{7});
    const WireHeader h = header();  // UCX reads it until the send completes
    Completion sent;
    links.send(not_sharing, h, payload.data(), payload.size(), sent);
    links.send(sharing, h, payload.data(), payload.size(), sent);  // below the by-reference size
    deliver(2, sent);
    for (const InboundMessage &m : got_.messages) {
        ASSERT_EQ(m.bytes, payload.size());
        EXPECT_EQ(m.data[3999], std::byte{7});
        EXPECT_FALSE(m.sender_writable);
    }
}

TEST_F(TwoWorkers, AnUnresolvableReferenceArrivesWithoutPayload) {
    auto segment = SharedSegment::create(std::size_t{8} << 20);
    ASSERT_TRUE(segment);
    std::byte *p = segment->allocate(4096);
    ASSERT_NE(p, nullptr);
    SegmentRef bad = segment->ref(p, 4096);
    bad.bytes = std::uint64_t{1} << 40;  // far past the segment
    WireHeader h = header();
    h.flags = static_cast<std::uint8_t>(h.flags | kByReference);
    Completion sent;
    sender_->send(ep_, h, &bad, sizeof bad, sent);
    deliver(1, sent);
    const InboundMessage &m = got_.messages[0];
    EXPECT_EQ(m.header.flags, kDenseRun);
    EXPECT_EQ(m.data, nullptr);
    EXPECT_EQ(m.bytes, 0u);
    EXPECT_FALSE(m.sender_writable);
}

}  // namespace
}  // namespace mpix::sparse::detail
