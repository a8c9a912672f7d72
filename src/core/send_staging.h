// Non-zero blocks the scan copies out, packed, into memory the aggregators read where it is (the
// transport's shared segment), so that a packed contribution is sent from there instead of being
// gathered from the input a second time: at 50% density on 4 ranks a worker read three eighths of
// its input again, scattered, to pack it (docs/performance.md, "Contributions packed by the scan").
//
// Blocks go in chunks of one message's worth (chunk_blocks), each chunk followed by room for a
// message's block numbers. A packed message whose blocks are consecutive staged blocks of one chunk,
// ending at the chunk's end or at the last staged block, is then a payload in wire layout once its
// block numbers are written after it (in_place). Others (the few cut by a shard's end) are packed
// as before. Only words of 64 blocks that are not nearly all non-zero are staged: dense runs go from
// the input as they did, and at 100% the scan keeps reading one line a block instead of every byte.
// Nor are the words of the shard this rank is expected to aggregate itself (begin's kept range):
// its own aggregator reads them from the input, and a quarter of the staging went unread on 4 ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/block_bitmap.h"
#include "core/block_layout.h"

namespace mpix::sparse::detail {

class SendStaging {
  public:
    // Bytes that hold every block of `layout` with its chunks' rooms.
    static std::size_t bytes_needed(const BlockLayout &layout, std::uint64_t chunk_blocks);

    // Starts staging `layout`'s blocks at `base` (bytes_needed() long). Blocks must be whole 64-byte
    // lines and `base` 8-byte aligned (the shared segment's allocations are line-aligned): every slot,
    // and so every payload sent from here, is then 8-byte aligned, as receivers require of a payload
    // read in place (wire_format.h, aligned8).
    // Blocks [kept_lo, kept_hi) stay unstaged where they fill whole words: the ones this rank expects
    // to aggregate itself, which its own aggregator reads from the input (a guess: the shards are cut
    // after the scan; any block left unstaged is packed from the input as before).
    void begin(std::byte *base, const BlockLayout &layout, std::uint64_t chunk_blocks, std::uint64_t kept_lo = 0,
               std::uint64_t kept_hi = 0);
    // Nothing staged (the scan without staging, or staging given up).
    void clear() { base_ = nullptr; }
    bool active() const { return base_ != nullptr; }
    std::byte *base() const { return base_; }
    // Bytes of the chunks used so far (what the staging keeps of its memory).
    std::size_t bytes_used() const;

    // The scan, word by word: whether a word is staged (not one of the kept words, and its
    // predecessor, with these bits, not nearly all non-zero), then the word's blocks with data, in order.
    bool stages(std::uint64_t word, std::uint64_t previous_bits) const {
        return __builtin_popcountll(previous_bits) < 44 && (word < kept_words_lo_ || word >= kept_words_hi_);
    }
    void skip_word(std::uint64_t word) { word_rank_[word] = kNotStaged; }
    void stage_word(std::uint64_t word, const std::byte *data, std::uint64_t bits);

    // A packed message of the n blocks with data in [first, last] (every one of them), when they lie
    // staged in wire layout: their block numbers (`index`, as the message carries them) are written
    // after them and the payload is returned, its length in *bytes. Null when they cannot go from
    // here. Const as a view is: it writes into the staged memory, not into this object.
    const std::byte *in_place(const BlockBitmap &bitmap, std::uint64_t first, std::uint64_t last, std::size_t n,
                              const std::uint32_t *index, std::size_t *bytes) const;
    // Whether in_place() would give such a message (it writes nothing).
    bool holds(const BlockBitmap &bitmap, std::uint64_t first, std::uint64_t last, std::size_t n) const;
    // At most how many blocks a message from block `first` (with data) may carry to end in its chunk:
    // chunk_blocks when `first` is not staged.
    std::uint64_t blocks_to_chunk_end(const BlockBitmap &bitmap, std::uint64_t first) const;

  private:
    static constexpr std::uint64_t kNotStaged = ~std::uint64_t{0};

    std::uint64_t rank_of(const BlockBitmap &bitmap, std::uint64_t k) const;
    std::byte *slot(std::uint64_t rank) const {
        return base_ + static_cast<std::size_t>(rank / chunk_blocks_) * stride_ +
               static_cast<std::size_t>(rank % chunk_blocks_) * layout_.block_bytes();
    }

    std::byte *base_ = nullptr;
    BlockLayout layout_;
    std::uint64_t chunk_blocks_ = 1;
    std::size_t stride_ = 0;           // bytes from one chunk to the next
    std::uint64_t staged_ = 0;         // blocks staged so far
    std::uint64_t kept_words_lo_ = 0;  // words [lo, hi) are not staged
    std::uint64_t kept_words_hi_ = 0;
    std::vector<std::uint64_t> word_rank_;  // per bitmap word: blocks staged before it, or kNotStaged
};

}  // namespace mpix::sparse::detail
