// Message planning from a worker's data: packed vs dense by exact byte counts, coverage ranges.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "algo/contribution_source.h"
#include "algo/message_cursor.h"
#include "core/block_scan.h"

namespace mpix::sparse::detail {
namespace {

TEST(ContributionSource, BitmapPlansDenseRunForContiguousBlocks) {
    const BlockLayout layout{64 * 4, 4, 4};  // 64 blocks of 16 bytes
    std::vector<std::uint32_t> data(layout.count, 0);
    for (std::uint64_t k = 10; k < 20; ++k)
        data[k * 4] = 1;
    BlockBitmap bitmap;
    bitmap.reset(64);
    scan_blocks(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
    BitmapSource source(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
    std::vector<std::uint32_t> index(64);
    const MessagePlan p = source.plan(0, 64, 64, index.data(), false);
    EXPECT_TRUE(p.dense);
    EXPECT_FALSE(p.presence);
    EXPECT_EQ(p.first, 10u);
    EXPECT_EQ(p.last, 19u);
    EXPECT_EQ(p.end, 64u);
    EXPECT_NE(source.dense_run(p), nullptr);
    // Budget of 4 blocks: the message stops and covers up to the next block it leaves out.
    const MessagePlan q = source.plan(0, 64, 4, index.data(), false);
    EXPECT_EQ(q.n, 4u);
    EXPECT_EQ(q.end, 14u);
}

TEST(ContributionSource, ScatteredBlocksArePacked) {
    const BlockLayout layout{64 * 4, 4, 4};
    std::vector<std::uint32_t> data(layout.count, 0);
    for (std::uint64_t k = 0; k < 64; k += 8)
        data[k * 4 + 3] = 2;
    BlockBitmap bitmap;
    bitmap.reset(64);
    scan_blocks(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
    BitmapSource source(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
    std::vector<std::uint32_t> index(64);
    const MessagePlan p = source.plan(0, 64, 64, index.data(), false);
    EXPECT_FALSE(p.dense);
    ASSERT_EQ(p.n, 8u);
    std::vector<std::byte> payload(max_packed_bytes(p.n, 16));
    const std::size_t bytes = source.pack(p, 0, index.data(), payload.data());
    EXPECT_EQ(bytes, 8 * 16 + 8 * 4u);
    WireHeader h;
    h.count = layout.count;
    h.block_elems = layout.block_elems;
    h.begin = 0;
    h.end = 64;
    h.nblocks = 8;
    MessageView view;
    ASSERT_EQ(check_payload(h, layout, payload.data(), bytes, &view), nullptr);
    MessageCursor cursor(view, layout);
    std::vector<std::uint64_t> seen;
    cursor.take_until(33, [&](const BlockBatch &b) {
        for (std::size_t i = 0; i < b.n; ++i)
            seen.push_back(b.block(i));
    });
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 8, 16, 24, 32}));
    EXPECT_EQ(cursor.peek(), 40u);
}

// Read in place by the aggregator, a run with gaps goes dense and whole (its zero blocks reduce as
// zeros) while it is at most three times its data; sparser runs stay packed, and so do runs too
// small to go by reference. Without in-place reading a run with gaps never goes without its
// presence bitmap.
TEST(ContributionSource, RunsWithGapsGoWholeWhenReadInPlace) {
    const BlockLayout layout{64 * 256, 256, 4};  // 64 blocks of 1 KiB
    auto plan_of = [&](std::uint64_t stride, bool in_place, std::uint64_t limit = 64) {
        std::vector<std::uint32_t> data(layout.count, 0);
        for (std::uint64_t k = 0; k < 64; k += stride)
            data[k * 256] = 1;
        BlockBitmap bitmap;
        bitmap.reset(64);
        scan_blocks(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
        BitmapSource source(reinterpret_cast<const std::byte *>(data.data()), layout, bitmap);
        std::vector<std::uint32_t> index(64);
        return source.plan(0, limit, 64, index.data(), in_place);
    };
    for (std::uint64_t stride : {2, 3}) {
        const MessagePlan p = plan_of(stride, true);
        EXPECT_TRUE(p.dense) << "every " << stride << " blocks";
        EXPECT_FALSE(p.presence) << "every " << stride << " blocks";
        EXPECT_LT(p.n, p.span());
        const MessagePlan q = plan_of(stride, false);
        EXPECT_TRUE(!q.dense || q.presence) << "every " << stride << " blocks, not in place";
    }
    const MessagePlan sparse = plan_of(4, true);
    EXPECT_FALSE(sparse.dense);
    const MessagePlan small = plan_of(2, true, 7);  // blocks 0, 2, 4, 6: a 7 KiB run
    EXPECT_TRUE(!small.dense || small.presence) << "below the by-reference size";
}

TEST(ContributionSource, PairsSwitchToDenseRunWithPresenceWhenCheaper) {
    // 4-byte values: packed costs 8 bytes a pair, a dense run 4 bytes an element plus a bit.
    std::vector<std::int64_t> idx;
    std::vector<float> val;
    for (std::int64_t i = 100; i < 200; ++i)
        if (i % 10 != 0) {
            idx.push_back(i);
            val.push_back(static_cast<float>(i));
        }
    PairsSource source(idx.data(), reinterpret_cast<const std::byte *>(val.data()), idx.size(), 4);
    std::vector<std::uint32_t> index(1000);
    const MessagePlan p = source.plan(0, 1000, 1000, index.data(), false);
    EXPECT_TRUE(p.dense);
    EXPECT_TRUE(p.presence);
    EXPECT_EQ(p.first, 101u);
    EXPECT_EQ(p.last, 199u);
    std::vector<std::byte> payload(max_packed_bytes(p.n, 4));
    const std::size_t bytes = source.pack(p, 0, index.data(), payload.data());
    WireHeader h;
    h.count = 1000;
    h.block_elems = 1;
    h.begin = 0;
    h.end = 1000;
    h.flags = kDenseRun | kPresence;
    h.first = p.first;
    h.nblocks = p.span();
    MessageView view;
    const BlockLayout layout{1000, 1, 4};
    ASSERT_EQ(check_payload(h, layout, payload.data(), bytes, &view), nullptr);
    MessageCursor cursor(view, layout);
    std::vector<std::uint64_t> seen;
    cursor.take_until(MessageCursor::kEnd, [&](const BlockBatch &b) {
        for (std::size_t i = 0; i < b.n; ++i)
            seen.push_back(b.block(i));
    });
    EXPECT_EQ(seen, std::vector<std::uint64_t>(idx.begin(), idx.end())) << "gaps are not part of the union";
}

// Plans the messages a worker sends of blocks [lo, hi), 16 blocks at most, as the stream does; each
// one that goes from the scan's staging must be byte for byte what pack() writes. `seen(plan,
// staged)` is told of every message.
template <class Seen>
void walk_messages(const BitmapSource &source, const BlockLayout &layout, std::uint64_t lo, std::uint64_t hi,
                   Seen seen) {
    std::vector<std::uint32_t> index(64);
    for (std::uint64_t from = lo; from < hi;) {
        const MessagePlan p = source.plan(from, hi, 16, index.data(), false);
        if (p.n == 0) break;
        std::vector<std::byte> want(max_packed_bytes(p.n, layout.block_bytes()));
        const std::size_t want_bytes = source.pack(p, from, index.data(), want.data());
        std::size_t got_bytes = 0;
        const std::byte *got = source.packed_in_place(p, index.data(), &got_bytes);
        if (got != nullptr) {
            ASSERT_EQ(got_bytes, want_bytes) << "from block " << from;
            EXPECT_EQ(std::memcmp(got, want.data(), want_bytes), 0) << "from block " << from;
        }
        seen(p, got != nullptr);
        from = p.end;
    }
}

// The scan stages the blocks it finds (core/send_staging.h). A packed message then goes from the
// staging whenever it ends where its chunk does or at the last staged block, byte for byte what
// pack() writes; one cut by a shard's end mid-chunk is packed. Words nearly all non-zero are not
// staged: their runs go dense from the input, as without staging.
TEST(ContributionSource, PackedMessagesGoFromTheScansStaging) {
    const BlockLayout layout{3000 * 16 + 5, 16, 4};  // 3001 blocks of 64 bytes, the last one of 20
    const std::uint64_t blocks = layout.num_blocks();
    std::mt19937 rng(5);
    std::vector<float> data(layout.count, 0.0f);
    for (std::uint64_t k = 0; k < blocks; ++k)
        if ((k >= 1280 && k < 1920) || rng() % 2 == 0)  // words 20-29 all non-zero
            data[k * 16 + k % (k + 1 == blocks ? 5 : 16)] = 1.0f + static_cast<float>(k);
    const auto *input = reinterpret_cast<const std::byte *>(data.data());
    const std::uint64_t chunk = 8;
    std::vector<std::byte> memory(SendStaging::bytes_needed(layout, chunk), std::byte{0xCD});
    SendStaging staging;
    staging.begin(memory.data(), layout, chunk);
    BlockBitmap bitmap, plain;
    bitmap.reset(blocks);
    plain.reset(blocks);
    const std::uint64_t nonzero = scan_blocks(input, layout, bitmap, &staging);
    ASSERT_EQ(scan_blocks(input, layout, plain), nonzero);
    for (std::uint64_t k = 0; k < blocks; ++k)
        ASSERT_EQ(bitmap.test(k), plain.test(k)) << "staging changed what the scan found at block " << k;
    EXPECT_LE(staging.bytes_used(), memory.size());

    BitmapSource source(input, layout, bitmap, nullptr, &staging);
    int in_place = 0, packed = 0, dense = 0;
    const std::uint64_t shards[][2] = {{0, 1001}, {1001, blocks}};  // cut mid-chunk
    for (const auto &shard : shards) {
        ASSERT_NO_FATAL_FAILURE(
            walk_messages(source, layout, shard[0], shard[1], [&](const MessagePlan &p, bool staged) {
                if (p.dense) {
                    EXPECT_FALSE(staged);
                    ++dense;
                } else if (staged) {
                    ++in_place;
                    EXPECT_LE(p.n, chunk) << "a message from the staging ends in its chunk";
                } else {
                    ++packed;
                }
            }));
    }
    EXPECT_GT(dense, 0) << "the words of non-zero blocks only go as dense runs";
    EXPECT_GT(in_place, 100);
    // The message cut by the shard's end, and those of word 30 (a word is staged or not by the one
    // before it, so staging resumes at word 31): about 32 blocks in messages of up to 16.
    EXPECT_GE(packed, 1);
    EXPECT_LE(packed, 8);
}

// The words of the blocks this rank expects to aggregate itself (begin()'s kept range: whole words
// of it only) are not staged: no message from there goes in place, and the staging keeps less. The
// blocks still travel, packed from the input, byte for byte what pack() writes.
TEST(ContributionSource, KeptBlocksAreNotStaged) {
    const BlockLayout layout{4096 * 16, 16, 4};  // 4096 blocks of 64 bytes, 64 words
    const std::uint64_t blocks = layout.num_blocks();
    std::mt19937 rng(11);
    std::vector<float> data(layout.count, 0.0f);
    for (std::uint64_t k = 0; k < blocks; ++k)
        if (rng() % 2 == 0) data[k * 16 + k % 16] = 1.0f + static_cast<float>(k);
    const auto *input = reinterpret_cast<const std::byte *>(data.data());
    const std::uint64_t chunk = 8, kept_lo = 1000, kept_hi = 2100;  // words 16-31 whole, 15 and 32 in part
    std::vector<std::byte> all(SendStaging::bytes_needed(layout, chunk)), some(all.size());
    SendStaging everything, kept;
    everything.begin(all.data(), layout, chunk);
    kept.begin(some.data(), layout, chunk, kept_lo, kept_hi);
    for (std::uint64_t w = 0; w < 64; ++w)
        EXPECT_EQ(kept.stages(w, 0), w < 16 || w >= 32) << "word " << w;
    BlockBitmap bitmap;
    bitmap.reset(blocks);
    scan_blocks(input, layout, bitmap, &everything);
    scan_blocks(input, layout, bitmap, &kept);
    EXPECT_LT(kept.bytes_used(), everything.bytes_used() * 13 / 16) << "16 of 64 words are not staged";

    BitmapSource source(input, layout, bitmap, nullptr, &kept);
    int in_place = 0, packed_in_kept = 0;
    ASSERT_NO_FATAL_FAILURE(walk_messages(source, layout, 0, blocks, [&](const MessagePlan &p, bool staged) {
        const bool in_kept_words = p.last >= 16 * 64 && p.first < 32 * 64;
        if (staged) {
            ++in_place;
            EXPECT_FALSE(in_kept_words) << "a message from block " << p.first << " went from the staging";
        } else if (!p.dense && in_kept_words) {
            ++packed_in_kept;
        }
    }));
    EXPECT_GT(in_place, 100);
    EXPECT_GT(packed_in_kept, 20) << "the kept words' blocks are packed from the input";
}

// A run with gaps that the aggregator could read in place still goes packed when the scan staged
// its blocks: their copy is made already, and the aggregator then reads only the data, not the gaps.
// Blocks the staging does not hold go whole as before.
TEST(ContributionSource, StagedRunsWithGapsGoFromTheStaging) {
    const BlockLayout layout{128 * 256, 256, 4};  // 128 blocks of 1 KiB, two words
    std::vector<float> data(layout.count, 0.0f);
    for (std::uint64_t k = 0; k < 128; k += 2)  // every other block: half the words' bits
        data[k * 256 + 7] = 1.0f + static_cast<float>(k);
    const auto *input = reinterpret_cast<const std::byte *>(data.data());
    const std::uint64_t chunk = 16;
    std::vector<std::byte> memory(SendStaging::bytes_needed(layout, chunk));
    SendStaging staging;
    staging.begin(memory.data(), layout, chunk, 64, 128);  // the second word is kept: not staged
    BlockBitmap bitmap;
    bitmap.reset(128);
    scan_blocks(input, layout, bitmap, &staging);
    std::vector<std::uint32_t> index(64);

    const BitmapSource plain(input, layout, bitmap);
    const MessagePlan whole = plain.plan(0, 128, 16, index.data(), true);
    EXPECT_TRUE(whole.dense) << "without staging, a run of half its blocks goes whole";
    EXPECT_FALSE(whole.presence);

    const BitmapSource staged(input, layout, bitmap, nullptr, &staging);
    const MessagePlan p = staged.plan(0, 128, 16, index.data(), true);
    EXPECT_FALSE(p.dense) << "staged blocks go packed from the staging";
    EXPECT_EQ(p.n, 16u);
    std::size_t bytes = 0;
    EXPECT_NE(staged.packed_in_place(p, index.data(), &bytes), nullptr);
    const MessagePlan kept = staged.plan(64, 128, 16, index.data(), true);
    EXPECT_TRUE(kept.dense) << "blocks the staging does not hold go whole, as without staging";
    EXPECT_FALSE(kept.presence);
}

}  // namespace
}  // namespace mpix::sparse::detail
