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
    std::vector<std::byte> mine(record);
    std::vector<std::byte> all(record * static_cast<std::size_t>(ranks));
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
    const int rc = MPI_Allgather(mine.data(), static_cast<int>(record), MPI_BYTE, all.data(),
                                 static_cast<int>(record), MPI_BYTE, state.comm());
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Allgather");
    counters.bytes_sent += record * static_cast<std::uint64_t>(ranks - 1);
    counters.bytes_received += record * static_cast<std::uint64_t>(ranks - 1);

    // Merge the sorted lists: per block, contributors in rank order.
    struct Cursor {
        const std::uint64_t *index;
        const std::byte *data;
        std::uint64_t n, at;
    };
    std::vector<Cursor> cursors;
    for (int r = 0; r < ranks; ++r) {
        const std::byte *rec = all.data() + static_cast<std::size_t>(r) * record;
        std::uint64_t count = 0;
        std::memcpy(&count, rec, 8);
        if (count > max_blocks) fail(ErrorId::ProtocolViolation, "allgather record longer than agreed");
        cursors.push_back({reinterpret_cast<const std::uint64_t *>(rec + 8), rec + 8 + max_blocks * 8, count, 0});
        for (std::uint64_t i = 0; i < count; ++i)
            if (cursors.back().index[i] >= layout.num_blocks() || (i > 0 && cursors.back().index[i] <= cursors.back().index[i - 1]))
                fail(ErrorId::ProtocolViolation, "allgather record has bad block numbers");
    }
    const ReduceKernels &k = kernels_for(type, op);
    std::vector<std::byte> acc(block_bytes);
    for (;;) {
        std::uint64_t next = layout.num_blocks();
        for (const Cursor &c : cursors)
            if (c.at < c.n && c.index[c.at] < next) next = c.index[c.at];
        if (next == layout.num_blocks()) break;
        const std::size_t elems = layout.elems_of(next);
        int contributors = 0;
        for (Cursor &c : cursors) {
            if (c.at >= c.n || c.index[c.at] != next) continue;
            const std::byte *x = c.data + c.at * block_bytes;
            if (contributors++ == 0) k.init(acc.data(), x, elems);
            else k.combine(acc.data(), x, elems);
            ++c.at;
        }
        if (contributors < ranks && k.finish_partial) k.finish_partial(acc.data(), elems);
        MessageView view;
        view.dense = true;
        view.first = next;
        view.n = 1;
        view.data = acc.data();
        sink.write(view);
    }
}

}  // namespace mpix::sparse::detail
