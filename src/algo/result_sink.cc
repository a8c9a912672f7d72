#include "algo/result_sink.h"

#include <algorithm>
#include <cstring>

#include "algo/message_cursor.h"
#include "core/memory_ops.h"

namespace mpix::sparse::detail {
void DenseResultSink::write(const MessageView &view) {
    // Into an output too large to stay cached, zeros and whole blocks go with streaming stores: its
    // lines are then written without being read first (the operation fences before its barrier).
    const bool streaming = layout_.total_bytes() >= kStreamingFillBytes;
    if (write_zeros_) {
        const std::size_t end = std::min(layout_.offset_of(view.cover_end), layout_.total_bytes());
        if (view.dense) {
            const std::size_t at = layout_.offset_of(view.first);
            const std::size_t bytes = layout_.run_bytes(view.first, view.n);
            zero(view.cover_begin, view.first);
            if (out_ + at != view.data) copy_bytes(out_ + at, view.data, bytes, streaming);  // else fetched there
            zero(view.first + view.n, view.cover_end);
        } else {
            write_covered(out_, layout_.offset_of(view.cover_begin), end, view.data, view.index,
                          static_cast<std::size_t>(view.n), layout_.block_bytes(), streaming);
        }
        return;
    }
    if (view.n == 0) return;
    if (view.dense) {
        std::byte *dst = out_ + layout_.offset_of(view.first);
        if (dst != view.data) copy_bytes(dst, view.data, layout_.run_bytes(view.first, view.n), streaming);
        return;
    }
    scatter_blocks(out_, view.data, view.index, view.n, view.first, layout_.block_bytes(),
                   layout_.bytes_of(view.first + view.index[view.n - 1]), streaming);
}

void DenseResultSink::zero(std::uint64_t first, std::uint64_t end) {
    if (end <= first) return;
    const std::size_t bytes = layout_.run_bytes(first, end - first);
    fill_zero(out_ + layout_.offset_of(first), bytes,
              layout_.total_bytes() >= kStreamingFillBytes && bytes >= kStreamingBlockBytes);
}

void CollectingResultSink::write(const MessageView &view) {
    if (view.n == 0) return;
    const std::size_t elem = layout_.elem_size;
    const std::size_t offset = indices_.size();
    MessageCursor cursor(view, layout_);
    cursor.take_until(MessageCursor::kEnd, [&](const BlockBatch &b) {
        for (std::size_t i = 0; i < b.n; ++i)
            indices_.push_back(static_cast<std::int64_t>(b.block(i)));
        values_.insert(values_.end(), b.data, b.data + b.n * elem);
    });
    if (indices_.size() > offset)
        pieces_.push_back(Piece{static_cast<std::uint64_t>(indices_[offset]), offset, indices_.size() - offset});
}

void CollectingResultSink::finish(std::vector<std::int64_t> &indices, std::vector<std::byte> &values) {
    const std::size_t elem = layout_.elem_size;
    std::sort(pieces_.begin(), pieces_.end(),
              [](const Piece &a, const Piece &b) { return a.first_index < b.first_index; });
    indices.resize(indices_.size());
    values.resize(values_.size());
    std::size_t at = 0;
    for (const Piece &p : pieces_) {
        std::memcpy(indices.data() + at, indices_.data() + p.offset, p.n * sizeof(std::int64_t));
        std::memcpy(values.data() + at * elem, values_.data() + p.offset * elem, p.n * elem);
        at += p.n;
    }
}

}  // namespace mpix::sparse::detail
