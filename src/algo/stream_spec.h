// What every participant of one streamed reduction agrees on: the vector's layout, the type and op,
// who contributes (workers) and who owns which shard of blocks (aggregators).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/block_layout.h"
#include "core/config.h"
#include "core/element_type.h"
#include "core/result_fanout.h"
#include "transport/wire_format.h"

namespace mpix::sparse::detail {

// Blocks one message of at most message_bytes of block data may carry (at least one).
inline std::uint64_t blocks_per_message(std::size_t message_bytes, const BlockLayout &layout) {
    const std::size_t b = layout.block_bytes();
    return message_bytes > b ? message_bytes / b : 1;
}

struct StreamSpec {
    std::uint32_t context = 0;
    std::uint64_t seq = 0;
    BlockLayout layout;
    ElementType type = ElementType::F32;
    ReduceOp op = ReduceOp::Sum;
    // Group ranks (the ranks of the communicator the links were made over) of each worker and each
    // aggregator. Workers contribute in this order, which is also the reduction order.
    std::vector<int> worker_peer;
    std::vector<int> aggregator_peer;
    // shard_bounds[a] .. shard_bounds[a + 1] are aggregator a's blocks (size aggregators + 1).
    std::vector<std::uint64_t> shard_bounds;
    int my_worker = -1;      // this rank's worker index, or -1
    int my_aggregator = -1;  // this rank's aggregator index, or -1
    // Who this rank sends results to and forwards them to (the communicator's, outliving the
    // stream); null: every worker gets every result straight from its aggregator.
    const ResultFanout *fanout = nullptr;
    std::size_t message_bytes = std::size_t{256} << 10;
    int window = 4;
    FailPoint fail_at = FailPoint::None;  // test hook: where this rank injects a failure
    // The longest range one packed result may cover: the wire's limit (32-bit block offsets from its
    // begin, checked by every receiver); smaller only in tests, so that the cut is exercised.
    std::uint64_t max_packed_span = kMaxPackedSpan;

    int workers() const { return static_cast<int>(worker_peer.size()); }
    int aggregators() const { return static_cast<int>(aggregator_peer.size()); }
    std::uint64_t shard_lo(int a) const { return shard_bounds[static_cast<std::size_t>(a)]; }
    std::uint64_t shard_hi(int a) const { return shard_bounds[static_cast<std::size_t>(a) + 1]; }
    std::uint64_t max_blocks_per_message() const { return blocks_per_message(message_bytes, layout); }
};

}  // namespace mpix::sparse::detail
