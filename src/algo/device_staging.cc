#include "algo/device_staging.h"

#include <cstring>

#include "algo/message_cursor.h"
#include "core/error.h"
#include "core/memory_ops.h"

namespace mpix::sparse::detail {

StagedResultSink::StagedResultSink(DeviceMemory &device, DeviceStaging &staging, const BlockLayout &layout)
    : device_(device), staging_(staging), layout_(layout) {
    const std::uint64_t blocks = layout.num_blocks();
    staging.output.reserve(device, static_cast<std::size_t>(blocks) * layout.block_bytes());
    staging.result_blocks.clear();
    staging.result_blocks.reserve(static_cast<std::size_t>(blocks));
    staging.result_present.reset(blocks);
}

void StagedResultSink::write(const MessageView &view) {
    if (view.n == 0) return;
    const std::size_t block_bytes = layout_.block_bytes();
    std::vector<std::uint64_t> &blocks = staging_.result_blocks;
    BlockBitmap &present = staging_.result_present;
    MessageCursor cursor(view, layout_);
    cursor.take_until(MessageCursor::kEnd, [&](const BlockBatch &b) {
        for (std::size_t i = 0; i < b.n; ++i) {
            const std::uint64_t k = b.block(i);
            if (present.test(k)) throw Error(ErrorId::ProtocolViolation, "a result block arrived twice");
            present.set(k);
            blocks.push_back(k);
        }
        // Back to back at block_bytes strides; only the vector's final block can be partial, and it
        // is the batch's last.
        const std::size_t slot = blocks.size() - b.n;
        const std::size_t bytes = (b.n - 1) * block_bytes + layout_.bytes_of(b.last());
        std::memcpy(staging_.output.data() + slot * block_bytes, b.data, bytes);
    });
}

void StagedResultSink::finish(std::byte *out) {
    device_.write_blocks(out, layout_, staging_.output.data(), staging_.result_blocks.data(),
                         staging_.result_blocks.size(), staging_.result_present);
}

void zero_absent_blocks(std::byte *out, const BlockLayout &layout, const BlockBitmap &bitmap) {
    const std::uint64_t blocks = layout.num_blocks();
    for (std::uint64_t k = bitmap.next_clear(0, blocks); k < blocks;) {
        const std::uint64_t end = bitmap.next_set(k, blocks);
        const std::size_t bytes = layout.run_bytes(k, end - k);
        fill_zero(out + layout.offset_of(k), bytes, bytes >= kStreamingFillBytes);
        k = bitmap.next_clear(end, blocks);
    }
}

}  // namespace mpix::sparse::detail
