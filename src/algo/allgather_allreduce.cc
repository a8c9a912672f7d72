#include "algo/allgather_allreduce.h"

#include <cstring>
#include <vector>

#include "core/comm_state.h"
#include "core/error.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {

// Record layout: uint64 n, then max_blocks uint64 block numbers, then max_blocks blocks of data,
// padded to 8 bytes so every record's numbers stay aligned.
std::uint64_t allgather_record_bytes(const BlockLayout &layout, std::uint64_t max_blocks) {
    return (8 + max_blocks * (8 + layout.block_bytes()) + 7) / 8 * 8;
}

void allgather_allreduce(CommState &state, const BlockLayout &layout, ElementType type, ReduceOp op,
                         const ContributionSource &source, std::uint64_t max_blocks, ResultSink &sink,
                         OpCounters &counters) {
    const int ranks = state.size();
    const std::size_t record = static_cast<std::size_t>(allgather_record_bytes(layout, max_blocks));
    const std::size_t block_bytes = layout.block_bytes();
    BufferPool &pool = state.resources().buffers;
    BufferPool::Buffer mine = pool.acquire(record);
    BufferPool::Buffer all = pool.acquire(record * static_cast<std::size_t>(ranks));
    auto *index = reinterpret_cast<std::uint64_t *>(mine.data() + 8);
    std::byte *data = mine.data() + 8 + max_blocks * 8;
    std::uint64_t n = 0;
    source.visit(0, layout.num_blocks(), [&](const BlockBatch &b) {
        for (std::size_t i = 0; i < b.n && n < max_blocks; ++i, ++n) {
            index[n] = b.block(i);
            std::memcpy(data + n * block_bytes, b.data + i * block_bytes, layout.bytes_of(index[n]));
        }
    });
    std::memcpy(mine.data(), &n, 8);
    const int rc = MPI_Allgather(mine.data(), static_cast<int>(record), MPI_BYTE, all.data(), static_cast<int>(record),
                                 MPI_BYTE, state.comm());
    pool.release(std::move(mine));
    if (rc != MPI_SUCCESS) {
        pool.release(std::move(all));
        throw Error(ErrorId::MpiFailure, rc, "MPI_Allgather");
    }
    counters.bytes_sent += record * static_cast<std::uint64_t>(ranks - 1);
    counters.bytes_received += record * static_cast<std::uint64_t>(ranks - 1);

    // Merge the sorted lists: per block, contributors in rank order. The union goes to the sink in
    // packed batches (ascending, so a dense output is written front to back).
    struct Cursor {
        const std::uint64_t *index;
        const std::byte *data;
        std::uint64_t n, at;
    };
    std::vector<Cursor> cursors;
    const std::uint64_t blocks = layout.num_blocks();
    for (int r = 0; r < ranks; ++r) {
        const std::byte *rec = all.data() + static_cast<std::size_t>(r) * record;
        std::uint64_t count = 0;
        std::memcpy(&count, rec, 8);
        bool ok = count <= max_blocks;
        const auto *idx = reinterpret_cast<const std::uint64_t *>(rec + 8);
        for (std::uint64_t i = 0; ok && i < count; ++i)
            ok = idx[i] < blocks && (i == 0 || idx[i] > idx[i - 1]);
        if (!ok) {
            pool.release(std::move(all));
            fail(ErrorId::ProtocolViolation, "allgather record with bad block numbers");
        }
        cursors.push_back({idx, rec + 8 + max_blocks * 8, count, 0});
    }
    const ReduceKernels &k = kernels_for(type, op);
    constexpr std::size_t kBatchBlocks = 65536;
    const std::size_t batch_blocks =
        std::max<std::size_t>(1, std::min<std::size_t>(kBatchBlocks, (16u << 20) / block_bytes));
    BufferPool::Buffer out = pool.acquire(batch_blocks * (block_bytes + sizeof(std::uint32_t)));
    std::byte *out_data = out.data();
    auto *out_index = reinterpret_cast<std::uint32_t *>(out.data() + batch_blocks * block_bytes);
    std::uint64_t cover = 0;  // the batch covers [cover, ...); indices relative to cover
    std::size_t filled = 0;
    auto flush = [&](std::uint64_t end) {
        MessageView view;
        view.cover_begin = cover;
        view.cover_end = end;
        view.first = cover;
        view.n = filled;
        view.data = out_data;
        view.index = out_index;
        sink.write(view);
        cover = end;
        filled = 0;
    };
    for (;;) {
        std::uint64_t next = blocks;
        for (const Cursor &c : cursors)
            if (c.at < c.n && c.index[c.at] < next) next = c.index[c.at];
        if (next == blocks) break;
        if (filled == batch_blocks || next - cover > 0xffffffffu) flush(next);
        std::byte *acc = out_data + filled * block_bytes;
        const std::size_t elems = layout.elems_of(next);
        int contributors = 0;
        for (Cursor &c : cursors) {
            if (c.at >= c.n || c.index[c.at] != next) continue;
            const std::byte *x = c.data + c.at * block_bytes;
            if (contributors++ == 0)
                k.init(acc, x, elems);
            else
                k.combine(acc, x, elems);
            ++c.at;
        }
        if (contributors < ranks && k.finish_partial) k.finish_partial(acc, elems);
        out_index[filled++] = static_cast<std::uint32_t>(next - cover);
    }
    if (filled > 0 || cover < blocks) flush(blocks);
    pool.release(std::move(out));
    pool.release(std::move(all));
}

}  // namespace mpix::sparse::detail
