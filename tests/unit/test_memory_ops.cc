// Bulk memory primitives: write_covered must write every byte of its range exactly as "zeros
// except the listed blocks", whatever the block size, alignment and range.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/line_streams.h"
#include "core/memory_ops.h"

namespace mpix::sparse::detail {
namespace {

// The first 64-byte line boundary at or after p.
std::byte *line_aligned(std::byte *p) {
    return p + ((64 - (reinterpret_cast<std::uintptr_t>(p) & 63)) & 63);
}

void check_write_covered(std::size_t block_bytes, std::size_t misalign, std::size_t first_block, std::size_t blocks,
                         std::size_t cut, double density, unsigned seed, bool streaming = true) {
    std::mt19937 rng(seed);
    const std::size_t begin = first_block * block_bytes;
    const std::size_t end = (first_block + blocks) * block_bytes - cut;  // cut: a partial final block
    std::vector<std::byte> storage(end + misalign + 128, std::byte{0xAB});
    std::byte *dst = storage.data() + misalign;
    std::vector<std::uint32_t> index;
    std::vector<std::byte> src;
    std::vector<std::byte> want(end, std::byte{0});
    std::bernoulli_distribution on(density);
    for (std::size_t b = 0; b < blocks; ++b) {
        if (!on(rng)) continue;
        index.push_back(static_cast<std::uint32_t>(b));
        const std::size_t offset = begin + b * block_bytes;
        for (std::size_t i = 0; i < block_bytes; ++i) {
            const auto v = static_cast<std::byte>(1 + rng() % 255);
            src.push_back(v);
            if (offset + i < end) want[offset + i] = v;
        }
    }
    write_covered(dst, begin, end, src.data(), index.data(), index.size(), block_bytes, streaming);
    store_fence();
    const std::string where = "block_bytes=" + std::to_string(block_bytes) + " misalign=" + std::to_string(misalign) +
                              " first=" + std::to_string(first_block) + " blocks=" + std::to_string(blocks) +
                              " cut=" + std::to_string(cut) + " density=" + std::to_string(density);
    for (std::size_t i = 0; i < misalign + begin; ++i)
        ASSERT_EQ(storage[i], std::byte{0xAB}) << "written before the range at " << i << ", " << where;
    for (std::size_t i = begin; i < end; ++i)
        ASSERT_EQ(dst[i], want[i]) << "byte " << i << ", " << where;
    for (std::size_t i = misalign + end; i < storage.size(); ++i)
        ASSERT_EQ(storage[i], std::byte{0xAB}) << "written past the range at " << i << ", " << where;
}

TEST(MemoryOps, WriteCoveredElementsAndBlocks) {
    unsigned seed = 1;
    for (std::size_t block_bytes : {std::size_t{4}, std::size_t{8}, std::size_t{12}, std::size_t{1024}})
        for (std::size_t misalign : {std::size_t{0}, std::size_t{4}, std::size_t{3}})
            for (std::size_t first : {std::size_t{0}, std::size_t{5}, std::size_t{1021}})
                for (std::size_t blocks : {std::size_t{0}, std::size_t{1}, std::size_t{37}, std::size_t{5000}})
                    for (double density : {0.0, 0.001, 0.04, 0.5, 1.0}) {
                        const bool streaming = seed % 2 == 0;  // both store kinds
                        check_write_covered(block_bytes, misalign, first, blocks, 0, density, seed++, streaming);
                    }
}

TEST(MemoryOps, WriteCoveredCutsThePartialFinalBlock) {
    // An 8-byte block whose final block holds one 4-byte element: must not take the element path.
    check_write_covered(8, 0, 3, 1000, 4, 1.0, 7);
    check_write_covered(8, 0, 0, 3, 4, 1.0, 8);
    check_write_covered(1024, 0, 2, 50, 1000, 0.5, 9);
}

TEST(MemoryOps, CopyBytesStreamingMatchesMemcpy) {
    for (std::size_t n : {std::size_t{0}, std::size_t{100}, std::size_t{256}, std::size_t{4099}, std::size_t{1} << 20})
        for (std::size_t misalign :
             {std::size_t{0}, std::size_t{1}, std::size_t{12}, std::size_t{16}, std::size_t{48}}) {
            // From a line boundary, so that misalign 0 has no partial line at the head (nor, for
            // whole lines, at the tail): the paths that call no memcpy at all.
            std::vector<std::byte> src(n), dst(n + misalign + 16 + 64, std::byte{0xAB});
            std::byte *line = line_aligned(dst.data());
            for (std::size_t i = 0; i < n; ++i)
                src[i] = static_cast<std::byte>(i * 7 + 3);
            copy_bytes(line + misalign, src.data(), n, true);
            store_fence();
            if (n > 0) {
                EXPECT_EQ(std::memcmp(line + misalign, src.data(), n), 0) << "n=" << n << " misalign=" << misalign;
            }
            EXPECT_EQ(line[n + misalign], std::byte{0xAB}) << "wrote past the end, n=" << n;
            if (misalign > 0) {
                EXPECT_EQ(line[misalign - 1], std::byte{0xAB}) << "wrote before the start, n=" << n;
            }
        }
}

// Every width this CPU has (the library picks one, line_streams()) writes exactly the lines it is given: the
// copy's bytes, or zeros, and nothing past them. A width the CPU lacks is skipped, not failed.
TEST(MemoryOps, EveryLineStreamWidthWritesExactlyItsLines) {
    int widths = 0;
    for (StreamWidth width : {StreamWidth::sse2, StreamWidth::avx512}) {
        const LineStreams *streams = line_streams_of(width);
        if (streams == nullptr) continue;
        ++widths;
        EXPECT_EQ(streams->width, width);
        for (std::size_t n :
             {std::size_t{0}, std::size_t{64}, std::size_t{192}, std::size_t{4096}, std::size_t{1} << 20})
            for (std::size_t src_misalign : {std::size_t{0}, std::size_t{8}, std::size_t{33}}) {
                std::vector<std::byte> src(n + src_misalign), dst(n + 128, std::byte{0xAB});
                for (std::size_t i = 0; i < src.size(); ++i)
                    src[i] = static_cast<std::byte>(i * 13 + 1);
                std::byte *line = line_aligned(dst.data());
                const std::size_t tail = static_cast<std::size_t>(dst.data() + dst.size() - (line + n));
                streams->copy(line, src.data() + src_misalign, n);
                store_fence();
                if (n > 0) {  // (memcmp may not be given an empty vector's null data())
                    EXPECT_EQ(std::memcmp(line, src.data() + src_misalign, n), 0) << "copy, n=" << n;
                }
                for (std::size_t i = 0; i < tail; ++i)
                    ASSERT_EQ(line[n + i], std::byte{0xAB}) << "copy wrote past its lines, n=" << n;
                streams->zero(line, n);
                store_fence();
                for (std::size_t i = 0; i < n; ++i)
                    ASSERT_EQ(line[i], std::byte{0}) << "zero, n=" << n << " byte " << i;
                for (std::size_t i = 0; i < tail; ++i)
                    ASSERT_EQ(line[n + i], std::byte{0xAB}) << "zero wrote past its lines, n=" << n;
            }
    }
#if defined(__SSE2__)
    EXPECT_GE(widths, 1);
    EXPECT_NE(line_streams_of(line_streams().width), nullptr);
#endif
}

// Streaming zeros: exactly [dst, dst + n), whatever dst's place in a line (streaming stores cover
// whole lines only; the partial lines at either end go with ordinary stores).
TEST(MemoryOps, FillZeroStreamingWritesExactlyItsRange) {
    for (std::size_t n : {std::size_t{0}, std::size_t{255}, std::size_t{256}, std::size_t{4099}, std::size_t{1} << 20})
        for (std::size_t misalign :
             {std::size_t{0}, std::size_t{1}, std::size_t{16}, std::size_t{48}, std::size_t{63}}) {
            std::vector<std::byte> dst(n + misalign + 128 + 64, std::byte{0xAB});
            std::byte *at = line_aligned(dst.data()) + misalign;
            fill_zero(at, n, true);
            store_fence();
            for (std::size_t i = 0; i < dst.size(); ++i) {
                const bool inside = dst.data() + i >= at && dst.data() + i < at + n;
                ASSERT_EQ(dst[i], inside ? std::byte{0} : std::byte{0xAB})
                    << "n=" << n << " misalign=" << misalign << " byte " << i;
            }
        }
}

// Either store kind writes exactly the listed blocks (a short final one cut to its length), nothing
// between or after them, whether the final block ends a run of adjacent ones or stands alone.
TEST(MemoryOps, StreamingScatterMatchesOrdinaryScatter) {
    const std::vector<std::vector<std::uint32_t>> lists = {{0, 3, 4, 9}, {0, 3, 4, 9, 10}, {2, 3, 4, 5}};
    for (std::size_t block : {std::size_t{4}, std::size_t{100}, std::size_t{256}, std::size_t{1024}})
        for (const auto &index : lists) {
            const std::size_t n = index.size(), last = block > 8 ? block / 2 + 1 : block;
            std::vector<std::byte> src(n * block);
            for (std::size_t i = 0; i < src.size(); ++i)
                src[i] = static_cast<std::byte>(i * 13 + 1);
            std::vector<std::byte> want(13 * block, std::byte{0x5c});
            for (std::size_t i = 0; i < n; ++i)
                std::memcpy(want.data() + (1 + index[i]) * block, src.data() + i * block, i + 1 < n ? block : last);
            std::vector<std::byte> plain(want.size(), std::byte{0x5c}), streamed(plain);
            scatter_blocks(plain.data(), src.data(), index.data(), n, 1, block, last, false);
            scatter_blocks(streamed.data(), src.data(), index.data(), n, 1, block, last, true);
            store_fence();
            EXPECT_EQ(plain, want) << "block " << block << ", " << n << " blocks";
            EXPECT_EQ(streamed, want) << "block " << block << ", " << n << " blocks";
        }
}

// Gathering is exact whichever stores it uses and wherever the packed buffer starts: the listed
// blocks back to back (the final one cut to its length), nothing after them; enough blocks that the
// reads asked for ahead reach the end of the list.
TEST(MemoryOps, StreamingGatherMatchesOrdinaryGather) {
    for (std::size_t block : {std::size_t{4}, std::size_t{100}, std::size_t{256}, std::size_t{1024}})
        for (std::size_t misalign : {std::size_t{0}, std::size_t{8}}) {
            std::vector<std::uint32_t> index;
            for (std::uint32_t b = 0; b < 40; b += 1 + b % 3)
                index.push_back(b);
            const std::size_t n = index.size(), last = block > 8 ? block / 2 + 1 : block;
            std::vector<std::byte> src(42 * block);
            for (std::size_t i = 0; i < src.size(); ++i)
                src[i] = static_cast<std::byte>(i * 13 + 1);
            std::vector<std::byte> want((n - 1) * block + last);
            for (std::size_t i = 0; i < n; ++i)
                std::memcpy(want.data() + i * block, src.data() + (2 + index[i]) * block, i + 1 < n ? block : last);
            std::vector<std::byte> plain(n * block + misalign + 64 + 64, std::byte{0x5c}), streamed(plain);
            // A byte of room before each, to see that nothing is written there.
            std::byte *p = line_aligned(plain.data() + 1) + misalign, *s = line_aligned(streamed.data() + 1) + misalign;
            gather_blocks(p, src.data(), index.data(), n, 2, block, last, false);
            gather_blocks(s, src.data(), index.data(), n, 2, block, last, true);
            const std::string where = "block " + std::to_string(block) + " misalign " + std::to_string(misalign);
            EXPECT_EQ(std::memcmp(p, want.data(), want.size()), 0) << where;
            EXPECT_EQ(std::memcmp(s, want.data(), want.size()), 0) << where;
            EXPECT_EQ(s[want.size()], std::byte{0x5c}) << "wrote past the cut final block, " << where;
            EXPECT_EQ(s[-1], std::byte{0x5c}) << "wrote before the buffer, " << where;
        }
}

}  // namespace
}  // namespace mpix::sparse::detail
