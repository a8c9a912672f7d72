// The host side of the device boundary for one operation (see core/device_memory.h): staging memory
// reused across calls, and a result sink that collects the union's blocks in staging and then writes
// the device output in one pass (result blocks scattered, every other block zeroed).
#pragma once

#include <cstdint>
#include <vector>

#include "algo/result_sink.h"
#include "core/block_bitmap.h"
#include "core/device_memory.h"

namespace mpix::sparse::detail {

// Kept in an operation's scratch, so steady calls allocate nothing.
struct DeviceStaging {
    StagingBuffer input;                    // the contribution's non-zero blocks, or the whole input
    StagingBuffer output;                   // the result's blocks, or the whole output
    StagingBuffer indices;                  // the element variant's indices
    std::vector<std::uint64_t> word_ranks;  // for a packed BitmapSource over `input`
    std::vector<std::uint64_t> result_blocks;
    BlockBitmap result_present;
};

class StagedResultSink final : public ResultSink {
  public:
    // Staging for the whole vector is reserved here (the union may be every block).
    StagedResultSink(DeviceMemory &device, DeviceStaging &staging, const BlockLayout &layout);

    std::byte *in_place(std::uint64_t, std::uint64_t) override { return nullptr; }
    // A block delivered twice is a protocol violation (the staging holds each block once).
    void write(const MessageView &view) override;
    // Writes the union, zeros elsewhere, into the device vector `out`.
    void finish(std::byte *out);

  private:
    DeviceMemory &device_;
    DeviceStaging &staging_;
    BlockLayout layout_;
};

// Zeros into every block of the host vector `out` whose bit in `bitmap` is clear.
void zero_absent_blocks(std::byte *out, const BlockLayout &layout, const BlockBitmap &bitmap);

}  // namespace mpix::sparse::detail
