#include "algo/allgather_allreduce.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "algo/stream_resources.h"
#include "algo/window_reducer.h"
#include "core/error.h"
#include "core/index_checks.h"
#include "core/memory_ops.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {
namespace {
constexpr std::size_t kScatterTileBytes = std::size_t{64} << 10;  // stays in L2 while pairs land in it
}  // namespace

namespace {

// A count no record can hold (every count is checked against max_blocks): the failed rank's mark.
constexpr std::uint64_t kFailedRecord = UINT64_MAX;

// Where a record's data starts: after its count and its block numbers, padded to 8 bytes so that the
// data (and the next record) stays aligned for every element type. No overflow: allgather_record_bytes
// accepted max_blocks first.
std::size_t record_data_offset(const BlockLayout &layout, std::uint64_t max_blocks) {
    return static_cast<std::size_t>(8 + (max_blocks * layout.number_bytes() + 7) / 8 * 8);
}

}  // namespace

// max_blocks comes from the agreement (one peer's value): a size that overflows is UINT64_MAX, which
// fits no buffer, never a small wrapped one.
std::uint64_t allgather_record_bytes(const BlockLayout &layout, std::uint64_t max_blocks) {
    std::uint64_t numbers = 0, data = 0, bytes = 0;
    if (__builtin_mul_overflow(max_blocks, std::uint64_t{layout.number_bytes()}, &numbers) ||
        __builtin_mul_overflow(max_blocks, std::uint64_t{layout.block_bytes()}, &data) ||
        __builtin_add_overflow(numbers, data, &bytes) ||
        __builtin_add_overflow(bytes, std::uint64_t{8 + 7 + 7}, &bytes))
        return UINT64_MAX;
    // Both parts padded to 8: at most 7 bytes each, which the sum above already holds.
    return 8 + (numbers + 7) / 8 * 8 + (data + 7) / 8 * 8;
}

void pack_record(const ContributionSource &source, const BlockLayout &layout, std::uint64_t max_blocks,
                 std::byte *record) {
    BlockNumbersOut numbers;
    if (layout.number_bytes() == 4)
        numbers.narrow = reinterpret_cast<std::uint32_t *>(record + 8);
    else
        numbers.wide = reinterpret_cast<std::uint64_t *>(record + 8);
    const std::uint64_t n =
        source.copy_blocks(layout, max_blocks, numbers, record + record_data_offset(layout, max_blocks));
    std::memcpy(record, &n, 8);
}

void mark_record_failed(std::byte *record) {
    std::memcpy(record, &kFailedRecord, 8);
}

namespace {

template <class Index>
const Index *numbers_of(const GatheredRecord &c) {
    return static_cast<const Index *>(c.index);
}

// Zeroes the tile's slots of pairs [from, to) (one element each; tile slot 0 is block `base`).
template <class Index>
void clear_slots(std::byte *tile, std::uint64_t base, const Index *index, std::uint64_t from, std::uint64_t to,
                 std::size_t elem) {
    auto clear = [&](auto zero) {
        for (std::uint64_t i = from; i < to; ++i)
            std::memcpy(tile + static_cast<std::size_t>(index[i] - base) * sizeof zero, &zero, sizeof zero);
    };
    if (elem == 4)
        clear(std::uint32_t{0});
    else if (elem == 8)
        clear(std::uint64_t{0});
    else if (elem == 2)
        clear(std::uint16_t{0});
    else
        for (std::uint64_t i = from; i < to; ++i)
            std::memset(tile + static_cast<std::size_t>(index[i] - base) * elem, 0, elem);
}

// Reduces the records window by window, contributors in rank order (the same result on every rank),
// and hands each window's union to the sink as one packed piece covering the window (zeros between).
template <class Index>
void reduce_records(StreamResources &resources, const BlockLayout &layout, const ReduceKernels &kernels,
                    std::vector<GatheredRecord> &records, ResultSink &sink) {
    const std::uint64_t blocks = layout.num_blocks();
    const std::size_t block_bytes = layout.block_bytes();
    const std::uint64_t window = std::max<std::uint64_t>(1, std::min(blocks, window_blocks(layout, 1)));
    BufferPool &pool = resources.buffers;
    WindowReducer reducer(layout, kernels, resources, window);
    BufferPool::Buffer acc = pool.acquire(static_cast<std::size_t>(window) * block_bytes);
    BufferPool::Buffer out = pool.acquire(static_cast<std::size_t>(window) * block_bytes);
    BufferPool::Buffer positions = pool.acquire(static_cast<std::size_t>(window) * sizeof(std::uint32_t));
    auto *pos = reinterpret_cast<std::uint32_t *>(positions.data());
    auto emit = [&](std::uint64_t begin, std::uint64_t end, std::size_t listed, const std::uint32_t *where) {
        MessageView view;
        view.cover_begin = begin;
        view.cover_end = end;
        view.first = begin;
        view.n = listed;
        view.data = out.data();
        view.index = where;
        sink.write(view);
    };
    const auto contributors = static_cast<std::uint32_t>(records.size());
    std::uint64_t cover = 0;  // the sink has [0, cover)
    for (;;) {
        std::uint64_t base = blocks;
        for (const GatheredRecord &c : records)
            if (c.at < c.n) base = std::min<std::uint64_t>(base, numbers_of<Index>(c)[c.at]);
        if (base == blocks) break;
        if (base > cover) emit(cover, base, 0, nullptr);  // zeros up to the window
        const std::uint64_t end = std::min(blocks, base + window);
        reducer.begin(base, end - base, acc.data());
        for (GatheredRecord &c : records) {
            const Index *index = numbers_of<Index>(c);
            std::size_t k = 0;
            while (c.at + k < c.n && index[c.at + k] < end) {
                pos[k] = static_cast<std::uint32_t>(index[c.at + k] - base);
                ++k;
            }
            if (k > 0) reducer.add(BlockBatch{base, pos, c.data + c.at * block_bytes, k});
            c.at += k;
        }
        const std::size_t u = reducer.finish(contributors);
        const std::uint32_t *in_union = reducer.union_positions();
        if (u > 0)
            gather_blocks(out.data(), acc.data(), in_union, u, 0, block_bytes, layout.bytes_of(base + in_union[u - 1]));
        emit(base, end, u, in_union);
        cover = end;
    }
    if (cover < blocks) emit(cover, blocks, 0, nullptr);
    pool.release(std::move(positions));
    pool.release(std::move(acc));
    pool.release(std::move(out));
}

bool exact_from_zero(const ReduceKernels &kernels, const std::vector<GatheredRecord> &records) {
    if (kernels.exact_from_zero == nullptr) return true;
    for (const GatheredRecord &c : records)
        if (!kernels.exact_from_zero(c.data, static_cast<std::size_t>(c.n))) return false;
    return true;
}

// Element records that op takes exactly from zero, into a dense output: a tile at a time, zeroed,
// every record's pairs there scattered into it in rank order. No slot counts contributors (most of
// the windowed reduction's time on pairs). An output that stays cached is its own tile; a larger one
// gets each tile from a scratch tile in one ordered write, since stores scattered into it would each
// read their line from memory first (2M-4M floats at 1%, 4 ranks: 1.4x slower than the windowed
// reduction that way).
template <class Index>
void scatter_records(StreamResources &resources, const BlockLayout &layout, const ReduceKernels &kernels,
                     std::vector<GatheredRecord> &records, ResultSink &sink) {
    const std::uint64_t blocks = layout.num_blocks();
    const std::size_t elem = layout.block_bytes();
    const std::uint64_t span = std::max<std::uint64_t>(1, kScatterTileBytes / elem);
    const bool cached = layout.total_bytes() <= kStreamingFillBytes;
    // The scratch tile, for an output that does not stay cached. Kept zero between tiles: after a
    // tile goes out, only the slots its pairs landed in are cleared again, unless they are many (at
    // 0.1% on 4 ranks a 64 KiB tile holds about 64 pairs; zeroing it whole took a quarter of a call).
    BufferPool::Buffer tile;
    if (!cached) {
        tile = resources.buffers.acquire(static_cast<std::size_t>(span) * elem);
        std::memset(tile.data(), 0, static_cast<std::size_t>(span) * elem);
    }
    std::uint64_t cover = 0;  // the sink has [0, cover)
    auto zeros_up_to = [&](std::uint64_t end) {
        if (end <= cover) return;
        MessageView view;
        view.cover_begin = cover;
        view.cover_end = end;
        view.first = cover;
        sink.write(view);
    };
    for (;;) {
        std::uint64_t base = blocks;
        for (const GatheredRecord &c : records)
            if (c.at < c.n) base = std::min<std::uint64_t>(base, numbers_of<Index>(c)[c.at]);
        if (base == blocks) break;
        const std::uint64_t end = std::min(blocks, base + span);
        std::byte *at = cached ? sink.overwrite(base, end - base) : tile.data();
        if (cached) std::memset(at, 0, static_cast<std::size_t>(end - base) * elem);
        std::uint64_t pairs = 0;
        for (GatheredRecord &c : records) {
            const Index *index = numbers_of<Index>(c);
            const Index *stop = std::lower_bound(index + c.at, index + c.n, end);
            const auto k = static_cast<std::size_t>(stop - (index + c.at));
            if constexpr (std::is_same_v<Index, std::uint32_t>)
                kernels.scatter_elements_narrow(at, base, index + c.at, c.data + c.at * elem, k);
            else
                kernels.scatter_elements(at, base, index + c.at, c.data + c.at * elem, k);
            c.tile_from = c.at;
            c.at += k;
            pairs += k;
        }
        zeros_up_to(base);
        if (!cached) {
            MessageView view;
            view.cover_begin = base;
            view.cover_end = end;
            view.dense = true;
            view.first = base;
            view.n = end - base;
            view.data = at;
            sink.write(view);
            // One store a pair, against one pass over the tile (about 64 bytes a cycle): the pass wins
            // from one pair per 64 slots.
            if (pairs * 64 > end - base) {
                std::memset(at, 0, static_cast<std::size_t>(end - base) * elem);
            } else {
                for (const GatheredRecord &c : records)
                    clear_slots(at, base, numbers_of<Index>(c), c.tile_from, c.at, elem);
            }
        }
        cover = end;
    }
    zeros_up_to(blocks);
    resources.buffers.release(std::move(tile));
}

}  // namespace

namespace {

template <class Index>
void reduce_records_of(const std::byte *all, int ranks, std::size_t record_bytes, const BlockLayout &layout,
                       ElementType type, ReduceOp op, std::uint64_t max_blocks, StreamResources &resources,
                       ResultSink &sink) {
    std::vector<GatheredRecord> &records = resources.records;
    records.clear();
    const std::uint64_t blocks = layout.num_blocks();
    const std::size_t data_at = record_data_offset(layout, max_blocks);
    for (int r = 0; r < ranks; ++r) {
        const std::byte *rec = all + static_cast<std::size_t>(r) * record_bytes;
        std::uint64_t count = 0;
        std::memcpy(&count, rec, 8);
        const auto *idx = reinterpret_cast<const Index *>(rec + 8);
        if (count == kFailedRecord) fail(ErrorId::RemoteFailure, "rank " + std::to_string(r) + " failed");
        if (count > max_blocks || !ascending_below(idx, static_cast<std::size_t>(count), blocks))
            fail(ErrorId::ProtocolViolation, "allgather record with bad block numbers");
        records.push_back({idx, rec + data_at, count, 0});
    }
    const ReduceKernels &kernels = kernels_for(type, op);
    if (layout.block_elems == 1 && kernels.scatter_elements != nullptr && sink.overwrite(0, 0) != nullptr &&
        exact_from_zero(kernels, records)) {
        scatter_records<Index>(resources, layout, kernels, records, sink);
        return;
    }
    reduce_records<Index>(resources, layout, kernels, records, sink);
}

}  // namespace

void reduce_gathered(const std::byte *all, int ranks, std::size_t record_bytes, const BlockLayout &layout,
                     ElementType type, ReduceOp op, std::uint64_t max_blocks, StreamResources &resources,
                     ResultSink &sink) {
    // record_bytes is allgather_record_bytes(layout, max_blocks) on every rank (the agreement gave
    // them one max_blocks), so the layout below lies inside each record.
    if (layout.number_bytes() == 4)
        reduce_records_of<std::uint32_t>(all, ranks, record_bytes, layout, type, op, max_blocks, resources, sink);
    else
        reduce_records_of<std::uint64_t>(all, ranks, record_bytes, layout, type, op, max_blocks, resources, sink);
}

}  // namespace mpix::sparse::detail
