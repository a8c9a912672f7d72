#include "core/send_staging.h"

#include <algorithm>

#include "core/memory_ops.h"
#include "transport/wire_format.h"

namespace mpix::sparse::detail {
namespace {

// A chunk's room: its block numbers and the padding before them (blocks are whole lines here, so
// none is needed, but the wire layout allows it), then up to the next line.
std::size_t chunk_stride(const BlockLayout &layout, std::uint64_t chunk_blocks) {
    const std::size_t data = static_cast<std::size_t>(chunk_blocks) * layout.block_bytes();
    const std::size_t room = sizeof(std::uint32_t) + static_cast<std::size_t>(chunk_blocks) * sizeof(std::uint32_t);
    return (data + room + 63) / 64 * 64;
}

}  // namespace

std::size_t SendStaging::bytes_needed(const BlockLayout &layout, std::uint64_t chunk_blocks) {
    const std::uint64_t chunks = (layout.num_blocks() + chunk_blocks - 1) / chunk_blocks;
    return (static_cast<std::size_t>(chunks) * chunk_stride(layout, chunk_blocks) + 4095) / 4096 * 4096;
}

void SendStaging::begin(std::byte *base, const BlockLayout &layout, std::uint64_t chunk_blocks, std::uint64_t kept_lo,
                        std::uint64_t kept_hi) {
    base_ = nullptr;  // until the words' ranks have their memory
    word_rank_.assign(static_cast<std::size_t>((layout.num_blocks() + 63) / 64), kNotStaged);
    base_ = base;
    layout_ = layout;
    chunk_blocks_ = chunk_blocks;
    stride_ = chunk_stride(layout, chunk_blocks);
    staged_ = 0;
    kept_words_lo_ = (kept_lo + 63) / 64;  // whole words only
    const std::uint64_t blocks = layout.num_blocks();
    kept_words_hi_ = std::max(kept_words_lo_, kept_hi >= blocks ? (blocks + 63) / 64 : kept_hi / 64);
}

std::size_t SendStaging::bytes_used() const {
    // Whole pages: what is allocated after it keeps the alignment it had without staging (the
    // offset of a load from the store before it, mod 4 KiB, decides whether they alias).
    const std::size_t bytes = static_cast<std::size_t>((staged_ + chunk_blocks_ - 1) / chunk_blocks_) * stride_;
    return (bytes + 4095) / 4096 * 4096;
}

void SendStaging::stage_word(std::uint64_t word, const std::byte *data, std::uint64_t bits) {
    word_rank_[word] = staged_;
    while (bits != 0) {
        const std::uint64_t k = word * 64 + static_cast<std::uint64_t>(__builtin_ctzll(bits));
        bits &= bits - 1;
        // Read by the aggregators, from memory: with streaming stores (blocks of 256 bytes or more,
        // copy_bytes), no line of the staging is read before it is written.
        copy_bytes(slot(staged_++), data + layout_.offset_of(k), layout_.bytes_of(k), true);
    }
}

std::uint64_t SendStaging::rank_of(const BlockBitmap &bitmap, std::uint64_t k) const {
    const std::uint64_t below = bitmap.words()[k >> 6] & ((std::uint64_t{1} << (k & 63)) - 1);
    return word_rank_[k >> 6] + static_cast<std::uint64_t>(__builtin_popcountll(below));
}

std::uint64_t SendStaging::blocks_to_chunk_end(const BlockBitmap &bitmap, std::uint64_t first) const {
    if (!active() || first >= layout_.num_blocks() || word_rank_[first >> 6] == kNotStaged) return chunk_blocks_;
    return chunk_blocks_ - rank_of(bitmap, first) % chunk_blocks_;
}

bool SendStaging::holds(const BlockBitmap &bitmap, std::uint64_t first, std::uint64_t last, std::size_t n) const {
    if (!active() || n == 0) return false;
    // Every word the blocks lie in was staged: their ranks are then consecutive.
    for (std::uint64_t w = first >> 6; w <= last >> 6; ++w)
        if (word_rank_[w] == kNotStaged) return false;
    const std::uint64_t r0 = rank_of(bitmap, first);
    const std::uint64_t r1 = r0 + n - 1;
    if (rank_of(bitmap, last) != r1 || r0 / chunk_blocks_ != r1 / chunk_blocks_) return false;
    // The block numbers go right after the data: into the chunk's room, or over slots no block uses.
    return (r1 + 1) % chunk_blocks_ == 0 || r1 + 1 == staged_;
}

const std::byte *SendStaging::in_place(const BlockBitmap &bitmap, std::uint64_t first, std::uint64_t last,
                                       std::size_t n, const std::uint32_t *index, std::size_t *bytes) const {
    if (!holds(bitmap, first, last, n)) return nullptr;
    std::byte *payload = slot(rank_of(bitmap, first));
    const std::size_t data = static_cast<std::size_t>(n - 1) * layout_.block_bytes() + layout_.bytes_of(last);
    *bytes = write_packed_index(payload, data, index, n);
    return payload;
}

}  // namespace mpix::sparse::detail
