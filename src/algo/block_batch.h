// A run of blocks handed between sources, kernels and sinks: `n` blocks packed back to back at
// `data`; block i is number first + index[i], or first + i when index is null (a contiguous run).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpix::sparse::detail {

struct BlockBatch {
    std::uint64_t first = 0;
    const std::uint32_t *index = nullptr;
    const std::byte *data = nullptr;
    std::size_t n = 0;

    std::uint64_t block(std::size_t i) const { return first + (index ? index[i] : i); }
    std::uint64_t last() const { return block(n - 1); }
};

}  // namespace mpix::sparse::detail
