// Results of a large vector through a ring of slots per aggregator, as contributions go through one
// per worker (WorkerRole::ring_slot). Copied into fresh shared memory with streaming stores, every
// result run is read back from memory by each worker; a ring is rewritten while still cached. A slot
// may be rewritten only once every worker it went to has read it, which the workers publish: after a
// result from slot s of aggregator a, use u, worker w stores ring_mark(seq, u) into word
// ring_mark_index(a, s) of its published words (Transport::published_words), and aggregator a reads
// it there before reusing the slot. A slot that is not free yet is not waited for: that result goes
// into fresh shared memory, as without a ring.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/transport.h"

namespace mpix::sparse::detail {

// No ring, of contributions or of results, is larger than this per peer: rings are worth their
// memory only while they stay in the cache.
inline constexpr std::size_t kMaxRingBytes = std::size_t{16} << 20;

// Aggregators (by index) and slots a worker's published words have room for: beyond, no ring.
inline constexpr std::size_t kRingMarkAggregators = 64;
inline constexpr std::size_t kRingMarkSlots = 8;
static_assert(kRingMarkAggregators * kRingMarkSlots <= kPublishedWords, "ring marks fit the published words");

// What a worker publishes after reading use `use` (1-based) of a slot in operation `seq`. Uses of
// one slot are read in order (the next is written only after this one is read), and the operation's
// number tells this operation's marks from an earlier one's.
inline std::uint64_t ring_mark(std::uint64_t seq, std::uint32_t use) {
    return (seq << 32) | use;
}

inline std::size_t ring_mark_index(std::size_t aggregator, std::size_t slot) {
    return aggregator * kRingMarkSlots + slot;
}

}  // namespace mpix::sparse::detail
