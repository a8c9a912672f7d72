// How a vector of `count` elements is cut into blocks of `block_elems` elements. The last block may
// be partial; every other block has block_bytes() bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpix::sparse::detail {

// The largest block a communicator may be configured with (mpix_sparse_block_size), and so the
// largest a peer's message may announce: receivers size buffers by it.
constexpr std::uint32_t kMaxBlockElems = std::uint32_t{1} << 20;

struct BlockLayout {
    std::uint64_t count = 0;        // elements in the vector
    std::uint32_t block_elems = 1;  // elements per block
    std::uint32_t elem_size = 1;    // bytes per element

    std::uint64_t num_blocks() const { return (count + block_elems - 1) / block_elems; }
    std::size_t block_bytes() const { return std::size_t{block_elems} * elem_size; }
    std::size_t total_bytes() const { return static_cast<std::size_t>(count) * elem_size; }
    // Bytes that hold any block number of the vector: 4 up to 2^32 blocks, else 8 (the allgather's
    // records, and the planner's price of them).
    std::size_t number_bytes() const { return num_blocks() <= (std::uint64_t{1} << 32) ? 4 : 8; }
    std::size_t offset_of(std::uint64_t block) const { return static_cast<std::size_t>(block) * block_bytes(); }
    std::uint32_t elems_of(std::uint64_t block) const {
        const std::uint64_t first = block * block_elems;
        const std::uint64_t left = count - first;
        return left < block_elems ? static_cast<std::uint32_t>(left) : block_elems;
    }
    std::size_t bytes_of(std::uint64_t block) const { return std::size_t{elems_of(block)} * elem_size; }
    // Bytes of the contiguous blocks [first, first + n): all full except possibly the vector's last.
    std::size_t run_bytes(std::uint64_t first, std::uint64_t n) const {
        if (n == 0) return 0;
        return offset_of(n - 1) + bytes_of(first + n - 1);
    }
};

}  // namespace mpix::sparse::detail
