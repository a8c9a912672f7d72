// The messages ranks exchange. Every message is an active message whose header is a WireHeader and
// whose payload holds blocks:
//   dense run (kDenseRun): the contiguous blocks [first, first + nblocks), exactly as in the vector;
//                         with kPresence, followed by a bitmap (uint32 words) of the blocks that
//                         are really there: the others are zero bytes sent only because one run was
//                         cheaper than a list, and are not part of the union;
//   packed:               nblocks blocks back to back (all full but a final partial block of the
//                         vector), then nblocks uint32 block numbers relative to `begin`, ascending.
// A message covers the block range [begin, end) of one aggregator's shard: blocks of the range that
// it does not carry are zero for its sender. Receivers validate everything here before use.
// Goodbye (a dedicated worker leaves), Abort (the sender failed operation `seq`; `sender` is its
// group rank) and Stalled (the sender has waited for operation `seq` past its timeout) carry only
// context, seq and sender.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/block_layout.h"

namespace mpix::sparse::detail {

// WarmUp is transport-level: the receiving transport counts it and drops it (UcxWorker's warm-up of
// the shared-memory path to a new peer); no algorithm sees one.
enum class MessageKind : std::uint8_t { Contribution = 1, Result = 2, Goodbye = 3, Abort = 4, Stalled = 5, WarmUp = 6 };

inline constexpr std::uint32_t kWireMagic = 0x4d505831;  // "MPX1"
inline constexpr std::uint8_t kDenseRun = 1;
inline constexpr std::uint8_t kPresence = 2;
// Transport-level: the payload is a SegmentRef (transport/shared_segment.h) naming where the data is
// in the sender's shared memory. The receiving transport resolves it and clears the flag, so the
// algorithms never see it.
inline constexpr std::uint8_t kByReference = 4;

struct WireHeader {
    std::uint32_t magic = kWireMagic;
    MessageKind kind = MessageKind::Contribution;
    std::uint8_t flags = 0;
    std::uint8_t elem_type = 0;
    std::uint8_t reduce_op = 0;
    std::uint32_t context = 0;      // which sparse communicator
    std::uint32_t sender = 0;       // worker index (Contribution, Goodbye) or aggregator index
    std::uint32_t block_elems = 0;  // elements per block
    std::uint32_t num_workers = 0;  // contributors of the operation
    std::uint64_t seq = 0;          // operation number on the communicator
    std::uint64_t count = 0;        // elements of the whole vector
    std::uint64_t shard_lo = 0;     // the aggregator's shard [shard_lo, shard_hi), in blocks
    std::uint64_t shard_hi = 0;
    std::uint64_t begin = 0;  // covered blocks [begin, end)
    std::uint64_t end = 0;
    std::uint64_t first = 0;    // dense run: first block carried
    std::uint64_t nblocks = 0;  // blocks carried
    // A result whose payload lies in slot `ring_slot` of its aggregator's result ring, as that slot's
    // use `ring_use` of the operation (1-based; 0: not in a ring). The worker publishes that it has
    // read it (algo/result_ring.h), so the slot can be rewritten.
    std::uint32_t ring_slot = 0;
    std::uint32_t ring_use = 0;
};
static_assert(sizeof(WireHeader) == 96, "WireHeader layout is part of the wire protocol");

// Packed block numbers are uint32 offsets from a message's begin: a packed message spans at most this
// many blocks.
inline constexpr std::uint64_t kMaxPackedSpan = 0xffffffffu;

// Payloads must be 8-byte aligned for typed access (check_payload rejects others; receivers copy
// a misaligned transport buffer first).
inline bool aligned8(const std::byte *p) {
    return (reinterpret_cast<std::uintptr_t>(p) & 7u) == 0;
}

// Where a payload's uint32 array (packed block numbers, or a presence bitmap) starts after
// data_bytes of block data: the next multiple of 4 (2-byte elements may end mid-word; the padding is
// zero bytes).
inline std::size_t word_aligned(std::size_t data_bytes) {
    return (data_bytes + 3) & ~std::size_t{3};
}

// Ends a packed payload whose block data fills its first data_bytes: zero padding, then the n block
// numbers. Returns the payload's size.
inline std::size_t write_packed_index(std::byte *payload, std::size_t data_bytes, const std::uint32_t *index,
                                      std::size_t n) {
    const std::size_t at = word_aligned(data_bytes);
    std::memset(payload + data_bytes, 0, at - data_bytes);
    std::memcpy(payload + at, index, n * sizeof(std::uint32_t));
    return at + n * sizeof(std::uint32_t);
}

inline std::size_t presence_bytes(std::uint64_t nblocks) {
    return static_cast<std::size_t>((nblocks + 31) / 32) * sizeof(std::uint32_t);
}

// A message's blocks, located inside its (checked) payload.
struct MessageView {
    std::uint64_t cover_begin = 0;  // the blocks [cover_begin, cover_end) the message settles:
    std::uint64_t cover_end = 0;    // those it does not carry are zero
    bool dense = false;
    std::uint64_t first = 0;                  // dense: first block of the run; packed: `begin`
    std::uint64_t n = 0;                      // dense: run length; packed: blocks listed
    const std::byte *data = nullptr;          // block data
    const std::uint32_t *index = nullptr;     // packed: block numbers relative to first
    const std::uint32_t *presence = nullptr;  // dense with kPresence: bit i = block first+i is there
};

// Checks that do not need the payload: magic, kind, ranges inside the vector and the shard, block
// counts consistent with the range. Returns a description of the first problem, or nullptr.
const char *check_header(const WireHeader &h, std::size_t header_bytes);

// Checks a payload against its (already checked) header and the receiver's layout: length, index
// order and range. Returns a description of the first problem, or nullptr and fills *view.
// index_copy, when given (packed_index_bytes(h, payload_bytes) bytes, 4-byte aligned): a packed
// payload's block numbers are copied there first, and checked and viewed there. For a payload its
// sender can still write (InboundMessage::sender_writable): the block numbers decide where the
// receiver writes, so they must not change between the check and the writes. (Block data and a
// dense run's presence bits may change harmlessly: they decide values, and which blocks of a checked
// run are taken.)
const char *check_payload(const WireHeader &h, const BlockLayout &layout, const std::byte *payload,
                          std::size_t payload_bytes, MessageView *view, std::uint32_t *index_copy = nullptr);

// The bytes of a packed payload's block numbers (for check_payload's index_copy); 0 for a dense run,
// a message without blocks, or a payload too short to hold them (which check_payload rejects).
inline std::size_t packed_index_bytes(const WireHeader &h, std::size_t payload_bytes) {
    if ((h.flags & kDenseRun) || h.nblocks == 0 || h.nblocks > payload_bytes / sizeof(std::uint32_t)) return 0;
    return static_cast<std::size_t>(h.nblocks) * sizeof(std::uint32_t);
}

}  // namespace mpix::sparse::detail
