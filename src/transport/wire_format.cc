#include "transport/wire_format.h"

#include <cstring>

#include "core/element_type.h"
#include "core/index_checks.h"

namespace mpix::sparse::detail {

const char *check_header(const WireHeader &h, std::size_t header_bytes) {
    if (header_bytes != sizeof(WireHeader)) return "header has the wrong size";
    if (h.magic != kWireMagic) return "bad magic";
    if (h.kind == MessageKind::Goodbye || h.kind == MessageKind::Abort || h.kind == MessageKind::Stalled)
        return nullptr;
    if (h.kind != MessageKind::Contribution && h.kind != MessageKind::Result) return "unknown kind";
    if (h.elem_type >= static_cast<std::uint8_t>(ElementType::Count_) ||
        h.reduce_op >= static_cast<std::uint8_t>(ReduceOp::Count_))
        return "unknown element type or op";
    if (!is_sparse_capable(static_cast<ElementType>(h.elem_type), static_cast<ReduceOp>(h.reduce_op)))
        return "type and op are not sparse-capable";
    if (h.block_elems == 0 || h.num_workers == 0) return "zero block size or workers";
    if (h.block_elems > kMaxBlockElems) return "block larger than any communicator's";
    const std::uint64_t blocks = (h.count + h.block_elems - 1) / h.block_elems;
    if (h.count > (std::uint64_t{1} << 62) || h.shard_lo > h.shard_hi || h.shard_hi > blocks)
        return "shard outside the vector";
    if (h.begin > h.end || h.begin < h.shard_lo || h.end > h.shard_hi) return "range outside the shard";
    if (h.nblocks > h.end - h.begin) return "more blocks than the range holds";
    // Packed block numbers are 32-bit offsets from begin; a message without blocks may cover more.
    if (h.nblocks > 0 && !(h.flags & kDenseRun) && h.end - h.begin > kMaxPackedSpan) return "packed range too long";
    if (h.flags & kDenseRun) {
        if (h.first < h.begin || h.first > h.end || h.nblocks > h.end - h.first) return "dense run outside the range";
    }
    return nullptr;
}

const char *check_payload(const WireHeader &h, const BlockLayout &layout, const std::byte *payload,
                          std::size_t payload_bytes, MessageView *view, std::uint32_t *index_copy) {
    *view = MessageView{};
    // Self-contained: nothing here relies on check_header having run, or on the caller having
    // matched the header to its own vector (the view is used to write into the receiver's memory).
    if (h.kind != MessageKind::Contribution && h.kind != MessageKind::Result) return "this kind carries no blocks";
    if (h.count != layout.count || h.block_elems != layout.block_elems) return "message about another vector";
    const std::uint64_t blocks = layout.num_blocks();
    if (h.begin > h.end || h.end > blocks) return "range outside the vector";
    if (h.nblocks > h.end - h.begin) return "more blocks than the range holds";
    if ((h.flags & kDenseRun) && h.nblocks > 0 && (h.first < h.begin || h.first > h.end - h.nblocks))
        return "dense run outside the range";
    view->cover_begin = h.begin;
    view->cover_end = h.end;
    view->data = payload;
    if (h.nblocks == 0) return payload_bytes == 0 ? nullptr : "payload without blocks";
    // The trailing uint32 arrays start at a multiple of 4 (word_aligned), so they are aligned when the
    // payload is; receivers hand in 8-byte aligned payloads.
    if (!aligned8(payload)) return "misaligned payload";
    if (h.flags & kDenseRun) {
        view->dense = true;
        view->first = h.first;
        view->n = h.nblocks;
        // Bounds the run's length by the payload before computing it (n blocks' bytes could wrap).
        if (h.nblocks - 1 > payload_bytes / layout.block_bytes()) return "dense run longer than its payload";
        const std::size_t data_bytes = layout.run_bytes(h.first, h.nblocks);
        if (!(h.flags & kPresence)) return payload_bytes == data_bytes ? nullptr : "dense run has wrong length";
        const std::size_t at = word_aligned(data_bytes);
        if (payload_bytes != at + presence_bytes(h.nblocks)) return "dense run has wrong length";
        view->presence = reinterpret_cast<const std::uint32_t *>(payload + at);
        return nullptr;
    }
    if (h.flags & kPresence) return "presence bitmap on a packed message";
    const std::size_t index_bytes = static_cast<std::size_t>(h.nblocks) * sizeof(std::uint32_t);
    if (payload_bytes < index_bytes) return "packed payload shorter than its index";
    if (h.nblocks - 1 > payload_bytes / layout.block_bytes()) return "packed payload shorter than its blocks";
    // The index starts at a multiple of 4 after the block data, so the payload's length is one too.
    if (payload_bytes % sizeof(std::uint32_t) != 0) return "packed payload length not a multiple of 4";
    const auto *idx = reinterpret_cast<const std::uint32_t *>(payload + (payload_bytes - index_bytes));
    if (index_copy != nullptr) {
        std::memcpy(index_copy, idx, index_bytes);
        idx = index_copy;
    }
    if (!ascending_below(idx, static_cast<std::size_t>(h.nblocks), h.end - h.begin))
        return "block numbers not ascending or outside the range";
    const std::size_t data_bytes =
        static_cast<std::size_t>(h.nblocks - 1) * layout.block_bytes() + layout.bytes_of(h.begin + idx[h.nblocks - 1]);
    if (word_aligned(data_bytes) + index_bytes != payload_bytes) return "packed payload has wrong length";
    view->first = h.begin;
    view->n = h.nblocks;
    view->index = idx;
    return nullptr;
}

}  // namespace mpix::sparse::detail
