// The zero-block scan and the bitmap it fills.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/block_bitmap.h"
#include "core/block_scan.h"

namespace mpix::sparse::detail {
namespace {

TEST(BlockBitmap, NextSetNextClearCount) {
    BlockBitmap b;
    b.reset(200);
    for (std::uint64_t k : {3u, 4u, 5u, 64u, 127u, 128u, 199u})
        b.set(k);
    EXPECT_EQ(b.next_set(0, 200), 3u);
    EXPECT_EQ(b.next_set(6, 200), 64u);
    EXPECT_EQ(b.next_set(65, 127), 127u);  // limit is exclusive: nothing in [65, 127)
    EXPECT_EQ(b.next_set(65, 128), 127u);
    EXPECT_EQ(b.next_clear(3, 200), 6u);
    EXPECT_EQ(b.next_clear(127, 200), 129u);
    EXPECT_EQ(b.next_clear(199, 200), 200u);
    EXPECT_EQ(b.count(0, 200), 7u);
    EXPECT_EQ(b.count(4, 128), 4u);
    EXPECT_EQ(b.count(200, 200), 0u);
    b.reset(10);
    EXPECT_EQ(b.next_set(0, 10), 10u) << "reset clears every bit";
}

TEST(BlockScan, FindsNonZeroBlocksExactly) {
    const BlockLayout layout{1000, 64, 4};  // 16 blocks, the last one 40 elements
    std::vector<float> data(1000, 0.0f);
    data[0] = 1.0f;                                               // block 0
    data[64 * 5 + 63] = std::numeric_limits<float>::quiet_NaN();  // block 5, last element
    data[64 * 7 + 10] = -0.0f;                                    // block 7: -0.0 has a non-zero byte
    data[999] = 1e-45f;                                           // block 15 (partial), a denormal
    BlockBitmap bitmap;
    bitmap.reset(layout.num_blocks());
    const std::uint64_t n = scan_blocks(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
    EXPECT_EQ(n, 4u);
    for (std::uint64_t k = 0; k < layout.num_blocks(); ++k)
        EXPECT_EQ(bitmap.test(k), k == 0 || k == 5 || k == 7 || k == 15) << "block " << k;
}

// Every density, so that words of 64 blocks take both the early-exit and the branch-free scan (chosen
// by the previous word's count), with the one non-zero byte anywhere in its block, blocks of one
// line and of many, a partial last block; against a byte-by-byte reference.
TEST(BlockScan, MatchesAReferenceAtEveryDensity) {
    std::uint32_t seed = 12345;
    auto next = [&seed] {
        seed = seed * 1664525u + 1013904223u;
        return seed >> 8;
    };
    for (std::uint32_t block_elems : {16u, 256u, 100u}) {
        for (std::size_t count : {std::size_t{64} * 256 * 80, std::size_t{64} * 256 * 80 - 77}) {
            const BlockLayout layout{count, block_elems, 4};
            std::vector<std::uint32_t> in(count, 0);
            // Density drifts from 0% to 100% and back across the buffer.
            const std::uint64_t blocks = layout.num_blocks();
            for (std::uint64_t k = 0; k < blocks; ++k) {
                const double phase = static_cast<double>(k) / static_cast<double>(blocks);
                const double density = phase < 0.5 ? 2 * phase : 2 * (1 - phase);
                if (static_cast<double>(next() % 1000) < 1000 * density) {
                    const std::size_t elems = layout.elems_of(k);
                    in[k * block_elems + next() % elems] = 1u << (next() % 32);
                }
            }
            BlockBitmap bitmap;
            bitmap.reset(blocks);
            const std::uint64_t n = scan_blocks(reinterpret_cast<const std::byte *>(in.data()), layout, bitmap);
            std::uint64_t expected = 0;
            for (std::uint64_t k = 0; k < blocks; ++k) {
                bool nonzero = false;
                for (std::size_t i = 0; i < layout.elems_of(k); ++i)
                    nonzero = nonzero || in[k * block_elems + i] != 0;
                expected += nonzero ? 1 : 0;
                ASSERT_EQ(bitmap.test(k), nonzero) << "block " << k << " of " << block_elems;
            }
            EXPECT_EQ(n, expected);
        }
    }
}

TEST(BlockScan, BytesAreZeroHandlesEveryLength) {
    std::vector<std::byte> buf(300, std::byte{0});
    for (std::size_t n = 0; n < 300; ++n)
        EXPECT_TRUE(bytes_are_zero(buf.data(), n));
    for (std::size_t pos = 0; pos < 300; ++pos) {
        buf[pos] = std::byte{1};
        EXPECT_FALSE(bytes_are_zero(buf.data(), 300)) << pos;
        EXPECT_TRUE(bytes_are_zero(buf.data(), pos));
        buf[pos] = std::byte{0};
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
