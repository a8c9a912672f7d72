// The zero-block scan: one pass over a rank's input that finds its non-zero blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/block_bitmap.h"
#include "core/block_layout.h"
#include "core/send_staging.h"

namespace mpix::sparse::detail {

// True when all n bytes at p are zero. An integer OR over the bytes: exact for every type (a block of
// -0.0 or NaN is non-zero) and NaN-safe.
bool bytes_are_zero(const std::byte *p, std::size_t n);

// Scans `data` (layout.total_bytes() bytes) and sets bit k of `bitmap` (already reset to
// layout.num_blocks() clear bits) for every block with a non-zero byte. It never writes the output:
// the output's zeros are written by the result sink, with the results (algo/result_sink.h). Returns the number
// of non-zero blocks. With `staging` (begun for this layout), it also copies the non-zero blocks of
// words that are not nearly all non-zero there (core/send_staging.h), fenced before it returns.
std::uint64_t scan_blocks(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap,
                          SendStaging *staging = nullptr);

}  // namespace mpix::sparse::detail
