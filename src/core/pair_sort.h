// Element-sparse input in canonical form: (index, value) pairs sorted by index with duplicates
// combined by the reduction op in input order (a stable LSD radix sort, so the combine order and hence
// the result are deterministic). Already sorted unique input is used in place, without a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {

struct SortedPairs {
    const std::int64_t *indices = nullptr;
    const std::byte *values = nullptr;
    std::size_t size = 0;
};

// Reusable memory of the sort (kept per communicator).
struct PairSortScratch {
    std::vector<std::uint64_t> keys, keys_tmp;
    std::vector<std::uint32_t> order, order_tmp;
    std::vector<std::int64_t> indices;
    std::vector<std::byte> values;
};

// Returns false when some index lies outside [0, count). Requires nnz < 2^32. The result points into the input or into
// scratch.
bool sort_pairs(const std::int64_t *indices, const std::byte *values, std::size_t nnz, std::size_t elem_size,
                std::uint64_t count, const ReduceKernels &kernels, PairSortScratch &scratch, SortedPairs &out);

}  // namespace mpix::sparse::detail
