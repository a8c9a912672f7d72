#include "algo/node_broadcast.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>

#include "core/block_scan.h"
#include "core/comm_state.h"
#include "core/error.h"
#include "core/index_checks.h"
#include "core/memory_ops.h"

namespace mpix::sparse::detail {
namespace {

// MPI_Bcast counts are int: large buffers go in slices of at most INT_MAX elements.
void bcast_slices(void *buf, std::uint64_t count, MPI_Datatype datatype, std::size_t extent, MPI_Comm comm) {
    constexpr std::uint64_t kSlice = static_cast<std::uint64_t>(INT_MAX);
    for (std::uint64_t done = 0; done < count;) {
        const std::uint64_t n = std::min(kSlice, count - done);
        const int rc = MPI_Bcast(static_cast<char *>(buf) + done * extent, static_cast<int>(n), datatype, 0, comm);
        if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Bcast");
        done += n;
    }
}

// Blocks go packed only while the packed form (data + a uint32 number each) is under this share of
// the buffer: above it the traffic saved is small next to the extra pack and unpack passes.
constexpr double kPackedShare = 0.5;
constexpr std::uint64_t kDenseMarker = std::numeric_limits<std::uint64_t>::max();

}  // namespace

std::uint64_t broadcast_from_leader(CommState &node_state, void *buf, const BlockLayout &layout, MPI_Datatype datatype,
                                    bool dense) {
    if (node_state.size() == 1) return 0;
    MPI_Comm comm = node_state.comm();
    const bool leader = node_state.rank() == 0;
    const std::uint64_t blocks = layout.num_blocks();
    const std::size_t block_bytes = layout.block_bytes();
    auto *bytes = static_cast<std::byte *>(buf);

    // The leader finds the result's non-zero blocks and tells the node how many (or that the whole
    // buffer follows).
    std::uint64_t n = kDenseMarker;
    BlockBitmap &bitmap = node_state.bitmap();
    if (leader && !dense && blocks <= std::numeric_limits<std::uint32_t>::max()) {
        bitmap.reset(blocks);
        n = scan_blocks(bytes, layout, bitmap, nullptr);
        if (static_cast<double>(n) * static_cast<double>(block_bytes + sizeof(std::uint32_t)) >=
            kPackedShare * static_cast<double>(layout.total_bytes()))
            n = kDenseMarker;
    }
    int rc = MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
    if (rc != MPI_SUCCESS) throw Error(ErrorId::MpiFailure, rc, "MPI_Bcast");
    if (n == kDenseMarker) {
        bcast_slices(buf, layout.count, datatype, layout.elem_size, comm);
        return layout.total_bytes();
    }
    if (n > blocks) fail(ErrorId::ProtocolViolation, "node broadcast announces more blocks than the vector has");

    // Packed: the blocks back to back (the vector's final block may be partial), then their numbers.
    const std::size_t data_bytes = static_cast<std::size_t>(n) * block_bytes;
    const std::size_t total = data_bytes + static_cast<std::size_t>(n) * sizeof(std::uint32_t);
    BufferPool &pool = node_state.resources().buffers;
    BufferPool::Buffer packed = pool.acquire(std::max<std::size_t>(total, 1));
    auto *index = reinterpret_cast<std::uint32_t *>(packed.data() + data_bytes);
    if (leader && n > 0) {
        std::uint64_t k = 0;
        for (std::uint64_t b = bitmap.next_set(0, blocks); b < blocks; b = bitmap.next_set(b + 1, blocks))
            index[k++] = static_cast<std::uint32_t>(b);
        const std::size_t last_bytes = layout.bytes_of(index[n - 1]);
        gather_blocks(packed.data(), bytes, index, static_cast<std::size_t>(n), 0, block_bytes, last_bytes);
        std::memset(packed.data() + data_bytes - block_bytes + last_bytes, 0, block_bytes - last_bytes);
    }
    try {
        bcast_slices(packed.data(), total, MPI_BYTE, 1, comm);
    } catch (...) {
        pool.release(std::move(packed));
        throw;
    }
    if (!leader) {
        if (!ascending_below(index, static_cast<std::size_t>(n), blocks)) {
            pool.release(std::move(packed));
            fail(ErrorId::ProtocolViolation, "node broadcast with bad block numbers");
        }
        write_covered(bytes, 0, layout.total_bytes(), packed.data(), index, static_cast<std::size_t>(n), block_bytes,
                      layout.total_bytes() >= kStreamingFillBytes);
        store_fence();
    }
    pool.release(std::move(packed));
    return total;
}

}  // namespace mpix::sparse::detail
