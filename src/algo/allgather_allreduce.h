// The allgather algorithm for tiny inputs, where latency dominates: every worker gathers every
// worker's non-zero blocks (or pairs) in one MPI_Allgather, each contribution padded to the largest,
// and reduces them locally in rank order. Cost: log P latencies + P * k bytes per rank.
#pragma once

#include <cstdint>

#include "algo/contribution_source.h"
#include "algo/result_sink.h"
#include "core/block_layout.h"
#include "core/element_type.h"

namespace mpix::sparse::detail {

struct StreamResources;

// Record layout: uint64 n, then max_blocks block numbers of layout.number_bytes() each (32-bit where
// they fit: a third less to gather for one-element blocks), padded to 8 bytes, then max_blocks blocks
// of data, padded to 8 bytes. UINT64_MAX when the size overflows.
std::uint64_t allgather_record_bytes(const BlockLayout &layout, std::uint64_t max_blocks);

// This rank's record: its block count, block numbers and blocks (at most max_blocks).
void pack_record(const ContributionSource &source, const BlockLayout &layout, std::uint64_t max_blocks,
                 std::byte *record);

// This rank's record when it failed the call after the agreement and before packing (a device
// buffer's blocks could not be read): it must still join the allgather, and its peers must learn of
// the failure rather than reduce what the record would hold.
void mark_record_failed(std::byte *record);

// After MPI_Allgather of every rank's record into `all`: checks each record (they come from other
// ranks) and reduces them window by window, contributors in rank order, into `sink`. Throws
// Error(RemoteFailure) when a peer's record is marked failed and Error(ProtocolViolation) on a
// malformed record, before anything is written.
void reduce_gathered(const std::byte *all, int ranks, std::size_t record_bytes, const BlockLayout &layout,
                     ElementType type, ReduceOp op, std::uint64_t max_blocks, StreamResources &resources,
                     ResultSink &sink);

}  // namespace mpix::sparse::detail
