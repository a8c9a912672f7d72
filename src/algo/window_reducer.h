// One window of blocks [base, base + span) reduced from several contributors, in the order they are
// added, and then listed as a union: shared by the aggregator (contributions as they stream in) and
// the allgather algorithm (the gathered records). The counts, marks and union list live in
// StreamResources (no per-call allocation) and are left clear for the next window.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algo/block_batch.h"
#include "algo/stream_resources.h"
#include "core/block_layout.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {

// Blocks per window: an accumulator of at most 256 KiB (it stays in cache), but at least min_blocks.
std::uint64_t window_blocks(const BlockLayout &layout, std::uint64_t min_blocks);

class WindowReducer {
  public:
    // Windows hold at most max_span blocks.
    WindowReducer(const BlockLayout &layout, const ReduceKernels &kernels, StreamResources &resources,
                  std::uint64_t max_span);

    // Starts a window; acc holds span blocks (slots no contributor touches are never read). 16-bit
    // floats accumulate in a float window and are rounded into acc by finish().
    void begin(std::uint64_t base, std::uint64_t span, std::byte *acc);
    // Reduces blocks of the window into it, in the order added. Contiguous runs of whole blocks wait
    // until the window ends or a batch of another kind comes, and are then reduced together: each
    // stretch of slots that several of them cover is read and written once for up to four of them
    // (a window's contributions at 100% are all such runs, one per contributor).
    void add(const BlockBatch &batch);
    // Ends the window: the union's size, its positions (relative to base, ascending) in union_();
    // slots fewer than `contributors` reached are finished with the identity.
    std::size_t finish(std::uint32_t contributors);
    const std::uint32_t *union_positions() const { return res_.union_.data(); }
    std::byte *acc() const { return acc_; }

  private:
    // Reduces the runs waiting in pending_runs, as they would have been one after another.
    void reduce_pending();

    const BlockLayout &layout_;
    const ReduceKernels &kernels_;
    StreamResources &res_;
    std::uint64_t base_ = 0, span_ = 0;
    std::byte *acc_ = nullptr;
    std::byte *slots_ = nullptr;  // where contributions accumulate: acc_, or the float window (16-bit floats)
};

}  // namespace mpix::sparse::detail
