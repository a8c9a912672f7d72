// The shared segment and a peer's view of it, in one process: the "peer" maps the segment through
// /proc/<pid>/fd like another rank of the machine would, so what it reads is what the owner wrote
// through a separate mapping of the same memory.
#include "transport/shared_segment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace mpix::sparse::detail {
namespace {

std::unique_ptr<SharedSegment> make_segment(std::size_t bytes) {
    auto s = SharedSegment::create(bytes);
    if (!s) ADD_FAILURE() << "memfd or mmap unavailable";
    return s;
}

TEST(SharedSegment, APeerReadsWhatTheOwnerWrote) {
    auto segment = make_segment(std::size_t{64} << 20);
    ASSERT_TRUE(segment);
    PeerSegments peer;
    peer.open_context(7);
    // Opened while still empty, as connect() does.
    ASSERT_NE(peer.resolve(segment->ref(nullptr, 0), 7), nullptr);

    std::vector<std::byte *> pieces;
    std::size_t total = 0;
    for (std::size_t bytes : {std::size_t{1000}, std::size_t{3} << 20, std::size_t{9} << 20}) {
        std::byte *p = segment->allocate(bytes);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
        for (std::size_t i = 0; i < bytes; ++i)
            p[i] = static_cast<std::byte>((i * 7 + bytes) & 0xff);
        pieces.push_back(p);
        total += bytes;
    }
    // The first piece is intact after the later ones.
    for (std::size_t i = 0; i < 1000; ++i)
        ASSERT_EQ(pieces[0][i], static_cast<std::byte>((i * 7 + 1000) & 0xff));
    std::size_t k = 0;
    for (std::size_t bytes : {std::size_t{1000}, std::size_t{3} << 20, std::size_t{9} << 20}) {
        const std::byte *seen = peer.resolve(segment->ref(pieces[k], bytes), 7);
        ASSERT_NE(seen, nullptr);
        EXPECT_EQ(std::memcmp(seen, pieces[k], bytes), 0);
        ++k;
    }
    EXPECT_GT(total, std::size_t{12} << 20);
}

TEST(SharedSegment, FullSegmentRefusesAndRecycleStartsOver) {
    auto segment = make_segment(std::size_t{2} << 20);
    ASSERT_TRUE(segment);
    std::byte *a = segment->allocate(std::size_t{1} << 20);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(segment->allocate(std::size_t{2} << 20), nullptr);  // no room left
    std::byte *b = segment->allocate(std::size_t{1} << 19);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(segment->contains(b, std::size_t{1} << 19));
    int local = 0;
    EXPECT_FALSE(segment->contains(&local, sizeof local));
    segment->recycle();
    EXPECT_EQ(segment->allocate(64), a);  // from the start again
}

TEST(SharedSegment, TrimGivesBackOnlyTheLatestAllocationsTail) {
    auto segment = make_segment(std::size_t{4} << 20);
    ASSERT_TRUE(segment);
    std::byte *a = segment->allocate(4096);
    segment->trim(a, 100);
    std::byte *b = segment->allocate(64);
    EXPECT_EQ(b, a + 128);  // 100 rounded up to the 64-byte alignment
    segment->trim(a, 10);   // not the latest: nothing changes
    EXPECT_EQ(segment->allocate(64), b + 64);
}

TEST(SharedSegment, MalformedReferencesResolveToNothing) {
    auto segment = make_segment(std::size_t{4} << 20);
    ASSERT_TRUE(segment);
    std::byte *p = segment->allocate(4096);
    ASSERT_NE(p, nullptr);
    PeerSegments peer;
    peer.open_context(1);
    const SegmentRef good = segment->ref(p, 4096);
    ASSERT_NE(peer.resolve(good, 1), nullptr);

    SegmentRef r = good;
    r.bytes = std::uint64_t{8} << 20;  // past the segment's end
    EXPECT_EQ(peer.resolve(r, 1), nullptr);
    r = good;
    r.offset = ~std::uint64_t{0} - 10;  // offset + bytes wraps
    EXPECT_EQ(peer.resolve(r, 1), nullptr);
    r = good;
    r.inode += 1;  // another file behind the same fd number
    EXPECT_EQ(peer.resolve(r, 1), nullptr);
    r = good;
    r.domain += 1;  // another machine or namespace
    EXPECT_EQ(peer.resolve(r, 1), nullptr);
    r = good;
    r.fd = STDIN_FILENO;  // not a memfd (a terminal, pipe or /dev/null): never opened for mapping
    r.inode = 0;
    EXPECT_EQ(peer.resolve(r, 1), nullptr);
    r = good;
    r.pid = 0;
    EXPECT_EQ(peer.resolve(r, 1), nullptr);
    EXPECT_EQ(peer.resolve(good, 2), nullptr);  // a context that is not open here
}

TEST(SharedSegment, ForgettingAContextUnmapsOnlyItsSegments) {
    auto first = make_segment(std::size_t{2} << 20), second = make_segment(std::size_t{2} << 20);
    ASSERT_TRUE(first && second);
    std::byte *a = first->allocate(256), *b = second->allocate(256);
    std::memset(a, 1, 256);
    std::memset(b, 2, 256);
    PeerSegments peer;
    peer.open_context(1);
    peer.open_context(2);
    ASSERT_NE(peer.resolve(first->ref(a, 256), 1), nullptr);
    ASSERT_NE(peer.resolve(second->ref(b, 256), 2), nullptr);
    peer.forget(1);
    const std::byte *still = peer.resolve(second->ref(b, 256), 2);
    ASSERT_NE(still, nullptr);
    EXPECT_EQ(still[255], std::byte{2});
    // A late reference for the freed communicator maps nothing again.
    EXPECT_EQ(peer.resolve(first->ref(a, 256), 1), nullptr);
    peer.open_context(1);
    const std::byte *again = peer.resolve(first->ref(a, 256), 1);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again[0], std::byte{1});
}

}  // namespace
}  // namespace mpix::sparse::detail
