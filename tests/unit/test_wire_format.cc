// Message validation: everything a peer says is checked before it is used.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "transport/wire_format.h"

namespace mpix::sparse::detail {
namespace {

WireHeader valid_header() {
    WireHeader h;
    h.kind = MessageKind::Contribution;
    h.elem_type = 0;  // F32
    h.reduce_op = 0;  // sum
    h.block_elems = 4;
    h.num_workers = 2;
    h.count = 40;  // 10 blocks of 16 bytes
    h.shard_lo = 2;
    h.shard_hi = 8;
    h.begin = 2;
    h.end = 8;
    return h;
}

const BlockLayout kLayout{40, 4, 4};

TEST(WireFormat, HeaderChecks) {
    EXPECT_EQ(check_header(valid_header(), sizeof(WireHeader)), nullptr);
    EXPECT_NE(check_header(valid_header(), sizeof(WireHeader) - 1), nullptr);
    auto h = valid_header();
    h.magic = 0;
    EXPECT_NE(check_header(h, sizeof h), nullptr);
    h = valid_header();
    h.shard_hi = 11;  // beyond the vector's 10 blocks
    EXPECT_NE(check_header(h, sizeof h), nullptr);
    h = valid_header();
    h.end = 9;  // beyond the shard
    EXPECT_NE(check_header(h, sizeof h), nullptr);
    h = valid_header();
    h.nblocks = 7;  // more than the range holds
    EXPECT_NE(check_header(h, sizeof h), nullptr);
    h = valid_header();
    h.elem_type = 0;
    h.reduce_op = 1;  // bor on float
    EXPECT_NE(check_header(h, sizeof h), nullptr);
    h = valid_header();
    h.flags = kDenseRun;
    h.first = 5;
    h.nblocks = 4;  // 5..8 runs past end 8
    EXPECT_NE(check_header(h, sizeof h), nullptr);
}

TEST(WireFormat, BlockLargerThanAnyCommunicatorsIsRefused) {
    // Receivers size buffers by the block (a dedicated aggregator learns its layout from a header):
    // a block beyond what mpix_sparse_block_size allows is malformed, not tens of GiB to allocate.
    auto h = valid_header();
    h.block_elems = kMaxBlockElems;
    h.count = std::uint64_t{10} * h.block_elems;  // still 10 blocks
    EXPECT_EQ(check_header(h, sizeof h), nullptr);
    h.block_elems = kMaxBlockElems + 1;
    h.count = std::uint64_t{10} * h.block_elems;
    EXPECT_NE(check_header(h, sizeof h), nullptr);
    h.block_elems = UINT32_MAX;
    h.count = std::uint64_t{10} * h.block_elems;
    EXPECT_NE(check_header(h, sizeof h), nullptr);
}

TEST(WireFormat, PackedPayloadLengthAndIndexOrder) {
    auto h = valid_header();
    h.nblocks = 2;
    std::vector<std::uint32_t> payload(8 + 2 + 1);  // two 16-byte blocks, two block numbers, a spare word
    payload[8] = 1;
    payload[9] = 4;
    MessageView view;
    auto *p = reinterpret_cast<const std::byte *>(payload.data());
    ASSERT_EQ(check_payload(h, kLayout, p, 40, &view), nullptr);
    EXPECT_FALSE(view.dense);
    EXPECT_EQ(view.n, 2u);
    EXPECT_EQ(view.first, 2u);
    EXPECT_EQ(view.index[1], 4u);
    EXPECT_NE(check_payload(h, kLayout, p, 36, &view), nullptr) << "short payload";
    payload[10] = 4;  // a 44-byte payload ending in "4" would parse as numbers {?, 4}: length decides
    EXPECT_NE(check_payload(h, kLayout, p, 44, &view), nullptr) << "long payload";
    payload[9] = 1;
    EXPECT_NE(check_payload(h, kLayout, p, 40, &view), nullptr) << "block numbers must ascend";
    payload[9] = 6;
    EXPECT_NE(check_payload(h, kLayout, p, 40, &view), nullptr) << "block 2+6 lies outside [2, 8)";
}

// A payload its sender can still write (a peer's shared segment): the block numbers are checked and
// viewed in the receiver's copy, so rewriting them afterwards changes nothing the receiver uses.
TEST(WireFormat, PackedIndexCopiedBeforeItIsChecked) {
    auto h = valid_header();
    h.nblocks = 2;
    std::vector<std::uint32_t> payload(8 + 2);  // two 16-byte blocks, then block numbers 1 and 4
    payload[8] = 1;
    payload[9] = 4;
    auto *p = reinterpret_cast<const std::byte *>(payload.data());
    EXPECT_EQ(packed_index_bytes(h, 40), 8u);
    EXPECT_EQ(packed_index_bytes(h, 4), 0u) << "too short to hold them: check_payload rejects it";
    std::vector<std::uint32_t> copy(2);
    MessageView view;
    ASSERT_EQ(check_payload(h, kLayout, p, 40, &view, copy.data()), nullptr);
    EXPECT_EQ(view.index, copy.data());
    payload[9] = 7;  // past the range [2, 8): had it been read again, a write outside it
    EXPECT_EQ(view.index[1], 4u);
    // The copy is what is checked: numbers out of order are rejected from it.
    payload[9] = 1;
    EXPECT_NE(check_payload(h, kLayout, p, 40, &view, copy.data()), nullptr);
    // Dense runs have no block numbers to copy.
    h.flags = kDenseRun;
    h.first = 2;
    EXPECT_EQ(packed_index_bytes(h, 32), 0u);
}

TEST(WireFormat, DenseRunWithPresence) {
    auto h = valid_header();
    h.flags = kDenseRun | kPresence;
    h.first = 3;
    h.nblocks = 3;
    std::vector<std::uint32_t> payload(12 + 1, 0);
    payload[12] = 0b101;
    MessageView view;
    auto *p = reinterpret_cast<const std::byte *>(payload.data());
    ASSERT_EQ(check_payload(h, kLayout, p, 52, &view), nullptr);
    EXPECT_TRUE(view.dense);
    ASSERT_NE(view.presence, nullptr);
    EXPECT_EQ(view.presence[0], 0b101u);
    EXPECT_NE(check_payload(h, kLayout, p, 48, &view), nullptr) << "presence bitmap missing";
    EXPECT_NE(check_payload(h, kLayout, p + 4, 52, &view), nullptr) << "misaligned payload";
}

TEST(WireFormat, PartialLastBlockLength) {
    WireHeader h = valid_header();
    h.count = 38;  // last block (9) has 2 elements
    h.shard_hi = 10;
    h.end = 10;
    h.begin = 8;
    h.flags = kDenseRun;
    h.first = 8;
    h.nblocks = 2;
    const BlockLayout layout{38, 4, 4};
    std::vector<std::uint32_t> payload(6);
    MessageView view;
    EXPECT_EQ(check_payload(h, layout, reinterpret_cast<const std::byte *>(payload.data()), 24, &view), nullptr);
    EXPECT_NE(check_payload(h, layout, reinterpret_cast<const std::byte *>(payload.data()), 32, &view), nullptr);
}

// A run whose length in bytes wraps past 2^64 must not match a short payload: with 8-byte elements,
// blocks of one, 2^61 + 1 blocks are 2^64 + 8 bytes, which wrap to 8 (found by review).
TEST(WireFormat, DenseRunWhoseLengthWrapsIsRefused) {
    const std::uint64_t count = std::uint64_t{1} << 62;
    const BlockLayout layout{count, 1, 8};
    WireHeader h = valid_header();
    h.elem_type = 1;  // F64
    h.block_elems = 1;
    h.count = count;
    h.shard_lo = 0;
    h.shard_hi = count;
    h.begin = 0;
    h.end = count;
    h.flags = kDenseRun;
    h.first = 0;
    h.nblocks = (std::uint64_t{1} << 61) + 1;
    std::vector<std::uint64_t> payload(1);
    MessageView view;
    const auto *p = reinterpret_cast<const std::byte *>(payload.data());
    EXPECT_NE(check_payload(h, layout, p, 8, &view), nullptr);
    h.flags = 0;  // the same count packed: its index alone is longer than the payload
    EXPECT_NE(check_payload(h, layout, p, 8, &view), nullptr);
    h.flags = kDenseRun;
    h.nblocks = 1;  // one block of 8 bytes is right
    EXPECT_EQ(check_payload(h, layout, p, 8, &view), nullptr);
}

// check_payload stands alone: it does not trust check_header to have run, nor the caller to have
// matched the header to its vector (found by the fuzzer, docs/reliability.md).
TEST(WireFormat, PayloadCheckStandsAlone) {
    std::vector<std::uint32_t> payload(4 + 1);  // one 16-byte block and its number
    payload[4] = 0;
    const auto *p = reinterpret_cast<const std::byte *>(payload.data());
    MessageView view;
    auto h = valid_header();
    h.nblocks = 1;
    ASSERT_EQ(check_payload(h, kLayout, p, 20, &view), nullptr);
    for (MessageKind k : {MessageKind::Goodbye, MessageKind::Abort, MessageKind::Stalled}) {
        h.kind = k;
        EXPECT_NE(check_payload(h, kLayout, p, 20, &view), nullptr) << "a header-only kind";
    }
    h = valid_header();
    h.nblocks = 1;
    EXPECT_NE(check_payload(h, BlockLayout{80, 4, 4}, p, 20, &view), nullptr) << "another count";
    EXPECT_NE(check_payload(h, BlockLayout{40, 2, 4}, p, 20, &view), nullptr) << "another block size";
    h.count = 4000;
    h.begin = 500;
    h.end = 600;  // valid for a receiver of that count, outside kLayout's 10 blocks
    EXPECT_EQ(check_payload(h, BlockLayout{4000, 4, 4}, p, 20, &view), nullptr);
    EXPECT_NE(check_payload(h, kLayout, p, 20, &view), nullptr);
    h = valid_header();
    h.flags = kDenseRun;
    h.first = 7;
    h.nblocks = 2;  // 7..8 runs past end 8
    EXPECT_NE(check_payload(h, kLayout, p, 32, &view), nullptr);
}

}  // namespace
}  // namespace mpix::sparse::detail
