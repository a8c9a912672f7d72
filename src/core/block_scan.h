// The zero-block scan: one pass over a rank's input that finds its non-zero blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/block_bitmap.h"
#include "core/block_layout.h"

namespace mpix::sparse::detail {

// True when all n bytes at p are zero. An integer OR over the bytes: exact for every type (a block of
// -0.0 or NaN is non-zero) and NaN-safe.
bool bytes_are_zero(const std::byte *p, std::size_t n);

// Scans `data` (layout.total_bytes() bytes) and sets bit k of `bitmap` (already reset to
// layout.num_blocks() clear bits) for every block with a non-zero byte. When `zero_fill` is not null,
// also writes zeros over block k of zero_fill for every all-zero block k: that is the result's
// value there unless another rank has the block, and doing it here saves a second pass over the
// output. Returns the number of non-zero blocks.
std::uint64_t scan_blocks(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap, std::byte *zero_fill);

}  // namespace mpix::sparse::detail
