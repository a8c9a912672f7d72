// A worker's contribution, read block by block: a dense buffer with its non-zero bitmap (block
// variant) or sorted unique (index, value) pairs (element variant, one element per block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "algo/block_batch.h"
#include "core/block_bitmap.h"
#include "core/block_layout.h"
#include "core/send_staging.h"

namespace mpix::sparse::detail {

// What to put in one message: `n` blocks from `first` to `last`, and the range it covers.
struct MessagePlan {
    std::uint64_t end = 0;    // covered range is [from, end)
    std::uint64_t first = 0;  // first block carried
    std::uint64_t last = 0;   // last block carried
    std::size_t n = 0;        // blocks with data carried
    bool dense = false;       // send [first, last] as one dense run
    bool presence = false;    // dense run with gaps: a presence bitmap follows the data

    std::uint64_t span() const { return last - first + 1; }
};

// Where copy_blocks writes block numbers: 32-bit ones (`narrow`) where every block number of the
// vector fits, else 64-bit ones (`wide`). One of the two is set.
struct BlockNumbersOut {
    std::uint32_t *narrow = nullptr;
    std::uint64_t *wide = nullptr;
};

class ContributionSource {
  public:
    virtual ~ContributionSource() = default;

    // First block with data in [from, limit), or limit.
    virtual std::uint64_t next(std::uint64_t from, std::uint64_t limit) const = 0;
    // Blocks with data in [from, limit).
    virtual std::uint64_t count(std::uint64_t from, std::uint64_t limit) const = 0;
    // Chooses the next message of the stream from `from`: at most max_blocks blocks, covering up to
    // the next block it leaves out (or limit); packed or dense, whichever has fewer bytes (or, with
    // gaps_in_place, whichever costs less to read where it is). When
    // packed, the block numbers relative to `from` are written to `index` (max_blocks long). With
    // `gaps_in_place` (the aggregator reads this source's dense data where it is), a run with gaps
    // may go dense without a presence bitmap: its zero blocks are then reduced as the zeros they are.
    virtual MessagePlan plan(std::uint64_t from, std::uint64_t limit, std::uint64_t max_blocks, std::uint32_t *index,
                             bool gaps_in_place) const = 0;
    // Writes the planned message's payload to dst in wire layout (packed: the listed blocks then
    // their block numbers; dense: the run [first, last] with zeros where there is no data, then the
    // presence bitmap if planned). Returns its length.
    virtual std::size_t pack(const MessagePlan &plan, std::uint64_t from, const std::uint32_t *index,
                             std::byte *dst) const = 0;
    // The planned packed message where it already lies in wire layout, in memory the aggregators read
    // in place (the scan's staging, core/send_staging.h), with its block numbers (`index`, relative
    // to `from`) written after its data; its length in *bytes. Null when it must be packed.
    virtual const std::byte *packed_in_place(const MessagePlan & /*plan*/, const std::uint32_t * /*index*/,
                                             std::size_t * /*bytes*/) const {
        return nullptr;
    }
    // A gap-free dense run [first, last] in place in the caller's memory (sent without a copy), or
    // null when this source has no contiguous memory for it.
    virtual const std::byte *dense_run(const MessagePlan &plan) const = 0;
    // Where block `first` of the dense vector is in the caller's memory (the blocks after it follow),
    // or null when this source holds no dense vector.
    virtual const std::byte *dense_data(std::uint64_t /*first*/) const { return nullptr; }
    // Calls fn with batches covering every block with data in [from, limit), in ascending order.
    virtual void visit(std::uint64_t from, std::uint64_t limit,
                       const std::function<void(const BlockBatch &)> &fn) const = 0;
    // Copies the first max_blocks blocks with data, in ascending order: their numbers to `numbers`,
    // their data back to back to data (the vector's final block with its own length). Returns how many.
    virtual std::uint64_t copy_blocks(const BlockLayout &layout, std::uint64_t max_blocks, BlockNumbersOut numbers,
                                      std::byte *data) const;
};

// Upper bound of the payload bytes pack() writes for a plan of at most max_blocks blocks of
// block_bytes each.
std::size_t max_packed_bytes(std::uint64_t max_blocks, std::size_t block_bytes);

// A bitmap of non-zero blocks and their data: either the dense buffer itself, or only the non-zero
// blocks packed back to back in ascending order (a device buffer's blocks in host staging). Packed,
// block k is at slot rank(k) = set bits below k, found from `word_ranks` (set bits below each
// bitmap word; see rank_words). A dense buffer may also have blocks the scan staged (`staging`):
// packed messages then end where its chunks do, and go from there when they can.
class BitmapSource final : public ContributionSource {
  public:
    BitmapSource(const std::byte *data, const BlockLayout &layout, const BlockBitmap &bitmap,
                 const std::uint64_t *word_ranks = nullptr, const SendStaging *staging = nullptr)
        : data_(data), layout_(layout), bitmap_(bitmap), ranks_(word_ranks),
          staging_(staging != nullptr && staging->active() ? staging : nullptr) {}

    std::uint64_t next(std::uint64_t from, std::uint64_t limit) const override { return bitmap_.next_set(from, limit); }
    std::uint64_t count(std::uint64_t from, std::uint64_t limit) const override { return bitmap_.count(from, limit); }
    MessagePlan plan(std::uint64_t from, std::uint64_t limit, std::uint64_t max_blocks, std::uint32_t *index,
                     bool gaps_in_place) const override;
    std::size_t pack(const MessagePlan &plan, std::uint64_t from, const std::uint32_t *index,
                     std::byte *dst) const override;
    const std::byte *packed_in_place(const MessagePlan &plan, const std::uint32_t *index,
                                     std::size_t *bytes) const override;
    const std::byte *dense_run(const MessagePlan &plan) const override {
        return plan.presence ? nullptr : address(plan.first);
    }
    const std::byte *dense_data(std::uint64_t first) const override {
        return ranks_ == nullptr ? data_ + layout_.offset_of(first) : nullptr;
    }
    void visit(std::uint64_t from, std::uint64_t limit,
               const std::function<void(const BlockBatch &)> &fn) const override;

  private:
    // Where block k's data is (k must be set when packed).
    const std::byte *address(std::uint64_t k) const;

    const std::byte *data_;
    BlockLayout layout_;
    const BlockBitmap &bitmap_;
    const std::uint64_t *ranks_;  // null: data_ is the dense buffer
    const SendStaging *staging_;  // null: nothing staged
};

// Fills ranks (one entry per bitmap word) with the number of set bits before each word.
void rank_words(const BlockBitmap &bitmap, std::vector<std::uint64_t> &ranks);

// Sorted unique indices with their values (block size 1).
class PairsSource final : public ContributionSource {
  public:
    PairsSource(const std::int64_t *indices, const std::byte *values, std::size_t nnz, std::size_t elem_size)
        : indices_(indices), values_(values), nnz_(nnz), elem_size_(elem_size) {}

    std::uint64_t next(std::uint64_t from, std::uint64_t limit) const override;
    std::uint64_t count(std::uint64_t from, std::uint64_t limit) const override {
        return lower_bound(limit) - lower_bound(from);
    }
    MessagePlan plan(std::uint64_t from, std::uint64_t limit, std::uint64_t max_blocks, std::uint32_t *index,
                     bool gaps_in_place) const override;
    std::size_t pack(const MessagePlan &plan, std::uint64_t from, const std::uint32_t *index,
                     std::byte *dst) const override;
    const std::byte *dense_run(const MessagePlan &) const override { return nullptr; }
    void visit(std::uint64_t from, std::uint64_t limit,
               const std::function<void(const BlockBatch &)> &fn) const override;
    std::uint64_t copy_blocks(const BlockLayout &layout, std::uint64_t max_blocks, BlockNumbersOut numbers,
                              std::byte *data) const override;

  private:
    std::size_t lower_bound(std::uint64_t index) const;

    const std::int64_t *indices_;
    const std::byte *values_;
    std::size_t nnz_;
    std::size_t elem_size_;
    mutable std::vector<std::uint32_t> batch_index_;  // visit() scratch, reused
};

}  // namespace mpix::sparse::detail
