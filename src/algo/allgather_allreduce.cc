#include "algo/allgather_allreduce.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/stream_resources.h"
#include "algo/window_reducer.h"
#include "core/error.h"
#include "core/index_checks.h"
#include "core/memory_ops.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {

// Record layout: uint64 n, then max_blocks uint64 block numbers, then max_blocks blocks of data,
// padded to 8 bytes so every record's numbers stay aligned.
std::uint64_t allgather_record_bytes(const BlockLayout &layout, std::uint64_t max_blocks) {
    return (8 + max_blocks * (8 + layout.block_bytes()) + 7) / 8 * 8;
}

void pack_record(const ContributionSource &source, const BlockLayout &layout, std::uint64_t max_blocks,
                 std::byte *record) {
    // The visitor captures one pointer, so std::function keeps it inline (no allocation per call).
    struct Packing {
        const BlockLayout &layout;
        std::size_t block_bytes;
        std::uint64_t max_blocks;
        std::uint64_t *index;
        std::byte *data;
        std::uint64_t n;
    } p{layout,
        layout.block_bytes(),
        max_blocks,
        reinterpret_cast<std::uint64_t *>(record + 8),
        record + 8 + max_blocks * 8,
        0};
    source.visit(0, layout.num_blocks(), [q = &p](const BlockBatch &b) {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(b.n, q->max_blocks - q->n));
        if (take == 0) return;
        for (std::size_t i = 0; i < take; ++i)
            q->index[q->n + i] = b.block(i);
        // The batch's blocks are back to back; only the vector's final block may be short.
        std::memcpy(q->data + q->n * q->block_bytes, b.data,
                    (take - 1) * q->block_bytes + q->layout.bytes_of(b.block(take - 1)));
        q->n += take;
    });
    std::memcpy(record, &p.n, 8);
}

namespace {

// Reduces the records window by window, contributors in rank order (the same result on every rank),
// and hands each window's union to the sink as one packed piece covering the window (zeros between).
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
            if (c.at < c.n) base = std::min(base, c.index[c.at]);
        if (base == blocks) break;
        if (base > cover) emit(cover, base, 0, nullptr);  // zeros up to the window
        const std::uint64_t end = std::min(blocks, base + window);
        reducer.begin(base, end - base, acc.data());
        for (GatheredRecord &c : records) {
            std::size_t k = 0;
            while (c.at + k < c.n && c.index[c.at + k] < end) {
                pos[k] = static_cast<std::uint32_t>(c.index[c.at + k] - base);
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

}  // namespace

void reduce_gathered(const std::byte *all, int ranks, std::size_t record_bytes, const BlockLayout &layout,
                     ElementType type, ReduceOp op, std::uint64_t max_blocks, StreamResources &resources,
                     ResultSink &sink) {
    std::vector<GatheredRecord> &records = resources.records;
    records.clear();
    const std::uint64_t blocks = layout.num_blocks();
    for (int r = 0; r < ranks; ++r) {
        const std::byte *rec = all + static_cast<std::size_t>(r) * record_bytes;
        std::uint64_t count = 0;
        std::memcpy(&count, rec, 8);
        const auto *idx = reinterpret_cast<const std::uint64_t *>(rec + 8);
        if (count > max_blocks || !ascending_below(idx, static_cast<std::size_t>(count), blocks))
            fail(ErrorId::ProtocolViolation, "allgather record with bad block numbers");
        records.push_back({idx, rec + 8 + max_blocks * 8, count, 0});
    }
    reduce_records(resources, layout, kernels_for(type, op), records, sink);
}

}  // namespace mpix::sparse::detail
