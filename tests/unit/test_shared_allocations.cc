// MPIX_Sparse_alloc_mem's memory (transport/shared_allocations.h) and a peer's view of it, in one
// process: the "peer" maps allocations through /proc/<pid>/fd as another rank of the machine does.
#include "transport/shared_allocations.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace mpix::sparse::detail {
namespace {

// The library falls back to ordinary memory where memfd is refused; these cases need segments.
#define SKIP_WITHOUT_SEGMENTS(ref)                                                                                     \
    if (!(ref).has_value()) GTEST_SKIP() << "no shared segments here (memfd or /proc refused)"

TEST(SharedAllocations, ZeroedAlignedAndFoundOnlyInside) {
    SharedAllocations &all = SharedAllocations::get();
    auto *p = static_cast<std::byte *>(all.allocate(100000));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    for (std::size_t i = 0; i < 100000; ++i)
        ASSERT_EQ(p[i], std::byte{0}) << "byte " << i;
    const auto inside = all.find(p + 4096, 8192);
    SKIP_WITHOUT_SEGMENTS(inside);
    EXPECT_EQ(inside->offset, 4096u);
    EXPECT_EQ(inside->bytes, 8192u);
    EXPECT_FALSE(all.find(p + 4096, std::size_t{1} << 30).has_value()) << "a range past the allocation";
    std::vector<std::byte> heap(8192);
    EXPECT_FALSE(all.find(heap.data(), heap.size()).has_value()) << "ordinary memory";
    EXPECT_FALSE(all.release(heap.data())) << "not an allocation";
    EXPECT_FALSE(all.release(p + 64)) << "inside an allocation, not its start";
    EXPECT_TRUE(all.release(p));
    EXPECT_FALSE(all.release(p)) << "freed twice";
    EXPECT_FALSE(all.find(p, 64).has_value()) << "freed";
}

TEST(SharedAllocations, SmallOnesAreOrdinaryMemory) {
    SharedAllocations &all = SharedAllocations::get();
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, SharedAllocations::kSmallest - 1}) {
        auto *p = static_cast<std::byte *>(all.allocate(bytes));
        ASSERT_NE(p, nullptr) << bytes;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
        for (std::size_t i = 0; i < bytes; ++i)
            ASSERT_EQ(p[i], std::byte{0});
        EXPECT_FALSE(all.find(p, bytes == 0 ? 1 : bytes).has_value()) << bytes << " bytes: not a segment";
        EXPECT_TRUE(all.release(p));
    }
}

TEST(SharedAllocations, APeerReadsItWhereItIs) {
    SharedAllocations &all = SharedAllocations::get();
    auto *p = static_cast<std::byte *>(all.allocate(1 << 20));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < (1 << 20); ++i)
        p[i] = static_cast<std::byte>(i * 13 & 0xff);
    PeerSegments peer;
    peer.open_context(3);
    const auto ref = all.find(p + 1000, 5000);
    SKIP_WITHOUT_SEGMENTS(ref);
    const std::byte *seen = peer.resolve(*ref, 3);
    ASSERT_NE(seen, nullptr);
    EXPECT_EQ(std::memcmp(seen, p + 1000, 5000), 0);
    p[2000] = std::byte{0xee};  // one memory, two mappings
    EXPECT_EQ(seen[1000], std::byte{0xee});
    EXPECT_TRUE(all.release(p));
}

// Freed and allocated again, an allocation gets the freed one's descriptor number with another
// inode: the peer maps the new one and keeps the old one, stale, until the context's next closing
// barrier (an abandoned operation may still point into it), then unmaps it (no mappings pile up in
// an allocate-free loop). A reference that still names the old one resolves to nothing.
TEST(SharedAllocations, APeerDropsTheMappingOfAFreedAllocation) {
    SharedAllocations &all = SharedAllocations::get();
    PeerSegments peer;
    peer.open_context(5);
    void *first = all.allocate(1 << 16);
    ASSERT_NE(first, nullptr);
    const auto old_ref = all.find(first, 64);
    SKIP_WITHOUT_SEGMENTS(old_ref);
    ASSERT_NE(peer.resolve(*old_ref, 5), nullptr);
    EXPECT_EQ(peer.mapped(), 1u);
    ASSERT_TRUE(all.release(first));
    void *second = all.allocate(1 << 16);
    ASSERT_NE(second, nullptr);
    const auto new_ref = all.find(second, 64);
    ASSERT_TRUE(new_ref.has_value());
    if (new_ref->fd != old_ref->fd) GTEST_SKIP() << "the descriptor number was not reused";
    ASSERT_NE(new_ref->inode, old_ref->inode);
    const std::byte *seen = peer.resolve(*new_ref, 5);
    ASSERT_NE(seen, nullptr);
    EXPECT_EQ(peer.mapped(), 2u) << "the freed allocation's mapping is kept until a barrier";
    EXPECT_EQ(peer.resolve(*old_ref, 5), nullptr) << "a stale reference";
    EXPECT_EQ(peer.mapped(), 2u) << "a stale reference maps nothing";
    peer.release_stale(6);
    EXPECT_EQ(peer.mapped(), 2u) << "another context's barrier";
    peer.release_stale(5);
    EXPECT_EQ(peer.mapped(), 1u) << "the freed allocation's mapping is gone";
    static_cast<std::byte *>(second)[10] = std::byte{7};
    EXPECT_EQ(seen[10], std::byte{7}) << "the live mapping still reads the allocation";
    EXPECT_TRUE(all.release(second));
}

}  // namespace
}  // namespace mpix::sparse::detail
