// The values that go into the benchmark's buffers. Every non-zero element is an integer in [1, 8], so
// sums of up to millions of ranks are exact in every type and results can be compared bitwise.
#ifndef MPIX_SPARSE_BENCH_INPUTS_H
#define MPIX_SPARSE_BENCH_INPUTS_H

#include "element_type.h"

#include <cstdint>
#include <vector>

namespace bench {

// Writes count elements: the listed blocks (block_size elements each, the last one possibly
// shorter) hold random values in [1, 8], all other elements are zero.
void fill_block_input(ElementType type, void *buf, std::int64_t count, std::int64_t block_size,
                      const std::vector<std::int64_t> &blocks, std::uint64_t seed);

// Writes n random values in [1, 8].
void fill_random_values(ElementType type, void *values, std::int64_t n, std::uint64_t seed);

// Writes the dense vector of count elements holding the given (index, value) pairs; indices distinct.
void densify_pairs(ElementType type, const std::int64_t *indices, const void *values, std::int64_t nnz, void *dense,
                   std::int64_t count);

}  // namespace bench

#endif
