#include "algo/contribution_source.h"

#include <algorithm>
#include <cstring>

#include "core/memory_ops.h"
#include "transport/shared_segment.h"
#include "transport/wire_format.h"

namespace mpix::sparse::detail {
namespace {

constexpr std::size_t kInPlaceRunFactor = 3;

// Packed bytes = data + one uint32 block number per block; dense bytes = the whole run, zeros
// included, plus a presence bit per block when the run has gaps. Exact counts decide (the switch
// SparCML makes); both carry every value exactly.
void choose_representation(MessagePlan &p, std::size_t run_bytes, std::size_t packed_data_bytes) {
    const bool gaps = p.n < p.span();
    const std::size_t dense = gaps ? word_aligned(run_bytes) + presence_bytes(p.span()) : run_bytes;
    p.dense = dense <= word_aligned(packed_data_bytes) + p.n * sizeof(std::uint32_t);
    p.presence = p.dense && gaps;
}

// Appends the block numbers (relative to `from`) to a packed payload, or the presence bitmap of a
// dense run with gaps; `at` is where the block data ended. Returns the payload length.
std::size_t finish_payload(const MessagePlan &p, std::uint64_t from, const std::uint32_t *index, std::byte *dst,
                           std::size_t at) {
    if (p.dense && !p.presence) return at;
    if (!p.dense) return write_packed_index(dst, at, index, p.n);
    const std::size_t aligned = word_aligned(at);
    std::memset(dst + at, 0, aligned - at);
    at = aligned;
    const std::size_t bytes = presence_bytes(p.span());
    auto *bits = reinterpret_cast<std::uint32_t *>(dst + at);
    std::memset(bits, 0, bytes);
    const std::uint64_t shift = p.first - from;
    for (std::size_t j = 0; j < p.n; ++j) {
        const std::uint64_t b = index[j] - shift;
        bits[b >> 5] |= std::uint32_t{1} << (b & 31);
    }
    return at + bytes;
}

}  // namespace

std::size_t max_packed_bytes(std::uint64_t max_blocks, std::size_t block_bytes) {
    // Packed: data, padding to a 4-byte boundary, 4 bytes per block. Dense is only chosen when not
    // larger than packed.
    return static_cast<std::size_t>(max_blocks) * (block_bytes + sizeof(std::uint32_t)) + sizeof(std::uint32_t);
}

MessagePlan BitmapSource::plan(std::uint64_t from, std::uint64_t limit, std::uint64_t max_blocks, std::uint32_t *index,
                               bool gaps_in_place) const {
    MessagePlan p;
    std::uint64_t k = bitmap_.next_set(from, limit);
    p.first = k;
    // A message that ends where its staged chunk does can go from the staging.
    if (staging_ != nullptr && k < limit) max_blocks = std::min(max_blocks, staging_->blocks_to_chunk_end(bitmap_, k));
    while (k < limit && p.n < max_blocks) {
        const std::uint64_t cap = std::min<std::uint64_t>(limit, k + (max_blocks - p.n));
        const std::uint64_t run_end = bitmap_.next_clear(k, cap);
        for (std::uint64_t j = k; j < run_end; ++j)
            index[p.n++] = static_cast<std::uint32_t>(j - from);
        p.last = run_end - 1;
        k = bitmap_.next_set(run_end, limit);
    }
    p.end = k;  // the first block with data left out, or limit
    if (p.n > 0) {
        const std::size_t packed = (p.n - 1) * layout_.block_bytes() + layout_.bytes_of(p.last);
        const std::size_t run = layout_.run_bytes(p.first, p.span());
        // Read in place, a run costs one read of it, zero blocks included; packed, its data is read,
        // written and read again. So the run wins up to about three times the data, when it does go
        // by reference (large enough, and 8-byte aligned, or the aggregator copies it). Unless the
        // scan staged its blocks already: the writing is paid for, and the aggregator reads only the
        // data from there (MPIX_Sparse_alloc_mem buffers at 50%: 5% slower than heap buffers without this).
        const bool by_reference = run >= kMinByReferenceBytes && ranks_ == nullptr && aligned8(address(p.first));
        const auto staged = [&] { return staging_ != nullptr && staging_->holds(bitmap_, p.first, p.last, p.n); };
        if (gaps_in_place && by_reference && (run == packed || (run <= kInPlaceRunFactor * packed && !staged())))
            p.dense = true;
        else
            choose_representation(p, run, packed);
    }
    return p;
}

const std::byte *BitmapSource::address(std::uint64_t k) const {
    if (ranks_ == nullptr) return data_ + layout_.offset_of(k);
    const std::uint64_t below = bitmap_.words()[k >> 6] & ((std::uint64_t{1} << (k & 63)) - 1);
    const std::uint64_t rank = ranks_[k >> 6] + static_cast<std::uint64_t>(__builtin_popcountll(below));
    return data_ + static_cast<std::size_t>(rank) * layout_.block_bytes();
}

std::size_t BitmapSource::pack(const MessagePlan &plan, std::uint64_t from, const std::uint32_t *index,
                               std::byte *dst) const {
    std::size_t bytes;
    if (plan.dense && ranks_ == nullptr) {
        // Zero blocks inside the run are zero bytes in the buffer already.
        bytes = layout_.run_bytes(plan.first, plan.span());
        std::memcpy(dst, data_ + layout_.offset_of(plan.first), bytes);
    } else if (plan.dense) {
        // Packed data: the run's zero blocks are written here, its non-zero runs copied in.
        bytes = layout_.run_bytes(plan.first, plan.span());
        const std::uint64_t end = plan.last + 1;
        for (std::uint64_t k = plan.first; k < end;) {
            const std::uint64_t run_end = bitmap_.next_clear(k, end);
            std::memcpy(dst + layout_.offset_of(k - plan.first), address(k), layout_.run_bytes(k, run_end - k));
            k = bitmap_.next_set(run_end, end);
            std::memset(dst + layout_.offset_of(run_end - plan.first), 0, layout_.run_bytes(run_end, k - run_end));
        }
    } else if (ranks_ != nullptr) {
        // Every set block of [first, last] is listed: they are adjacent in the packed data.
        bytes = (plan.n - 1) * layout_.block_bytes() + layout_.bytes_of(plan.last);
        std::memcpy(dst, address(plan.first), bytes);
    } else {
        // Into a large vector's message, which the aggregator reads from memory: no line of it is
        // read first.
        gather_blocks(dst, data_, index, plan.n, from, layout_.block_bytes(), layout_.bytes_of(plan.last),
                      layout_.total_bytes() >= kStreamingFillBytes);
        bytes = (plan.n - 1) * layout_.block_bytes() + layout_.bytes_of(plan.last);
    }
    return finish_payload(plan, from, index, dst, bytes);
}

const std::byte *BitmapSource::packed_in_place(const MessagePlan &plan, const std::uint32_t *index,
                                               std::size_t *bytes) const {
    if (staging_ == nullptr || plan.dense || plan.n == 0) return nullptr;
    return staging_->in_place(bitmap_, plan.first, plan.last, plan.n, index, bytes);
}

void BitmapSource::visit(std::uint64_t from, std::uint64_t limit,
                         const std::function<void(const BlockBatch &)> &fn) const {
    std::uint64_t k = bitmap_.next_set(from, limit);
    while (k < limit) {
        // A run of set blocks is contiguous in the dense buffer and in the packed data alike.
        const std::uint64_t run_end = bitmap_.next_clear(k, limit);
        fn(BlockBatch{k, nullptr, address(k), static_cast<std::size_t>(run_end - k)});
        k = bitmap_.next_set(run_end, limit);
    }
}

void rank_words(const BlockBitmap &bitmap, std::vector<std::uint64_t> &ranks) {
    const std::uint64_t words = (bitmap.size() + 63) / 64;
    ranks.resize(static_cast<std::size_t>(words));
    std::uint64_t below = 0;
    for (std::uint64_t i = 0; i < words; ++i) {
        ranks[i] = below;
        below += static_cast<std::uint64_t>(__builtin_popcountll(bitmap.words()[i]));
    }
}

std::size_t PairsSource::lower_bound(std::uint64_t index) const {
    const auto *it = std::lower_bound(indices_, indices_ + nnz_, static_cast<std::int64_t>(index));
    return static_cast<std::size_t>(it - indices_);
}

std::uint64_t PairsSource::next(std::uint64_t from, std::uint64_t limit) const {
    const std::size_t i = lower_bound(from);
    if (i < nnz_ && static_cast<std::uint64_t>(indices_[i]) < limit) return static_cast<std::uint64_t>(indices_[i]);
    return limit;
}

MessagePlan PairsSource::plan(std::uint64_t from, std::uint64_t limit, std::uint64_t max_blocks, std::uint32_t *index,
                              bool) const {
    MessagePlan p;
    std::size_t i = lower_bound(from);
    p.first = i < nnz_ ? static_cast<std::uint64_t>(indices_[i]) : limit;
    while (i < nnz_ && static_cast<std::uint64_t>(indices_[i]) < limit && p.n < max_blocks) {
        index[p.n++] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(indices_[i]) - from);
        ++i;
    }
    if (p.n == 0) {
        p.first = limit;
        p.end = limit;
        return p;
    }
    p.last = from + index[p.n - 1];
    p.end =
        (i < nnz_ && static_cast<std::uint64_t>(indices_[i]) < limit) ? static_cast<std::uint64_t>(indices_[i]) : limit;
    choose_representation(p, p.span() * elem_size_, p.n * elem_size_);
    return p;
}

std::size_t PairsSource::pack(const MessagePlan &plan, std::uint64_t from, const std::uint32_t *index,
                              std::byte *dst) const {
    const std::size_t i0 = lower_bound(plan.first);
    if (!plan.dense) {
        std::memcpy(dst, values_ + i0 * elem_size_, plan.n * elem_size_);
        return finish_payload(plan, from, index, dst, plan.n * elem_size_);
    }
    const std::size_t bytes = plan.span() * elem_size_;
    fill_zero(dst, bytes, false);
    const std::uint64_t shift = plan.first - from;
    for (std::size_t j = 0; j < plan.n; ++j)
        std::memcpy(dst + (index[j] - shift) * elem_size_, values_ + (i0 + j) * elem_size_, elem_size_);
    return finish_payload(plan, from, index, dst, bytes);
}

std::uint64_t ContributionSource::copy_blocks(const BlockLayout &layout, std::uint64_t max_blocks,
                                              BlockNumbersOut numbers, std::byte *data) const {
    // The visitor captures one pointer, so std::function keeps it inline (no allocation per call).
    struct Copying {
        const BlockLayout &layout;
        std::size_t block_bytes;
        std::uint64_t max_blocks;
        BlockNumbersOut numbers;
        std::byte *data;
        std::uint64_t n;
    } c{layout, layout.block_bytes(), max_blocks, numbers, data, 0};
    visit(0, layout.num_blocks(), [q = &c](const BlockBatch &b) {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(b.n, q->max_blocks - q->n));
        if (take == 0) return;
        if (q->numbers.narrow != nullptr)
            for (std::size_t i = 0; i < take; ++i)
                q->numbers.narrow[q->n + i] = static_cast<std::uint32_t>(b.block(i));
        else
            for (std::size_t i = 0; i < take; ++i)
                q->numbers.wide[q->n + i] = b.block(i);
        // The batch's blocks are back to back; only the vector's final block may be short.
        std::memcpy(q->data + q->n * q->block_bytes, b.data,
                    (take - 1) * q->block_bytes + q->layout.bytes_of(b.block(take - 1)));
        q->n += take;
    });
    return c.n;
}

// Pairs are the blocks already: a copy of both arrays, without batching them for a visitor.
std::uint64_t PairsSource::copy_blocks(const BlockLayout &, std::uint64_t max_blocks, BlockNumbersOut numbers,
                                       std::byte *data) const {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(max_blocks, nnz_));
    if (numbers.narrow != nullptr)
        for (std::size_t i = 0; i < n; ++i)
            numbers.narrow[i] = static_cast<std::uint32_t>(indices_[i]);
    else
        for (std::size_t i = 0; i < n; ++i)
            numbers.wide[i] = static_cast<std::uint64_t>(indices_[i]);
    if (n > 0) std::memcpy(data, values_, n * elem_size_);
    return n;
}

void PairsSource::visit(std::uint64_t from, std::uint64_t limit,
                        const std::function<void(const BlockBatch &)> &fn) const {
    constexpr std::size_t kBatch = 4096;
    batch_index_.resize(kBatch);
    std::size_t i = lower_bound(from);
    while (i < nnz_ && static_cast<std::uint64_t>(indices_[i]) < limit) {
        // Block numbers in a batch are 32-bit offsets from its first index.
        const auto first = static_cast<std::uint64_t>(indices_[i]);
        std::size_t n = 0;
        const std::size_t start = i;
        while (n < kBatch && i < nnz_ && static_cast<std::uint64_t>(indices_[i]) < limit &&
               static_cast<std::uint64_t>(indices_[i]) - first <= 0xffffffffu) {
            batch_index_[n++] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(indices_[i]) - first);
            ++i;
        }
        fn(BlockBatch{first, batch_index_.data(), values_ + start * elem_size_, n});
    }
}

}  // namespace mpix::sparse::detail
