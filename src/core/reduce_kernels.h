// Reduction kernels for the sparse path, one set per (element type, operation), chosen once per call.
//
// An aggregator accumulates the blocks of one window of its shard: per window slot it counts the
// contributors seen so far. The first contributor initializes the slot (copy, or 0/1 normalization
// for the logical ops); later ones combine into it. Contributors are visited in one fixed order, so the
// result is bitwise reproducible.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/element_type.h"

namespace mpix::sparse::detail {

struct ReduceKernels {
    // For i in [0, nblocks): slot = pos(i) where pos(i) = index ? index[i] + shift : shift + i;
    // the `elems` elements at acc + slot * stride accumulate those at data + i * stride (stride in
    // elements: the block size; elems < stride only for the vector's final, partial block),
    // counts[slot] is incremented, and a slot's first contribution sets its bit in `touched` (so the
    // caller finds the union without scanning every slot). Positions ascend and stay in the window.
    void (*accumulate)(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, const std::uint32_t *index,
                       std::int64_t shift, const std::byte *data, std::size_t nblocks, std::size_t elems,
                       std::size_t stride);
    // The same as k calls of accumulate, one per source in the order given, on the nblocks slots
    // from `slot` on, where every source holds those blocks back to back (source j's block i at
    // sources[j] + i * stride elements): the same values bit for bit, counts and marks, but each slot
    // is read and written once per four sources instead of once per source. A source may be the
    // slots themselves (an aggregator reducing in place). Null for 16-bit floats.
    void (*accumulate_runs)(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, std::size_t slot,
                            const std::byte *const *sources, std::size_t k, std::size_t nblocks, std::size_t elems,
                            std::size_t stride);
    // Called on a slot that fewer than all ranks contributed to: combines the identity into it. Only
    // float SUM needs it (-0.0 + +0.0 = +0.0, as MPI_Allreduce computes); null otherwise.
    void (*finish_partial)(std::byte *slot, std::size_t elems);
    // After a window of `span` one-element slots: lists the touched slots in ascending order into
    // union_out (returning how many), finishes partial ones, and clears their counts and marks.
    std::size_t (*collect_elements)(std::byte *acc, std::uint32_t *counts, std::uint64_t *touched, std::size_t span,
                                    std::uint32_t contributors, std::uint32_t *union_out);
    // acc[i] = init(x[i]) and acc[i] = op(acc[i], x[i]) over n elements: duplicates and allgather.
    void (*init)(std::byte *acc, const std::byte *x, std::size_t n);
    void (*combine)(std::byte *acc, const std::byte *x, std::size_t n);
    // One-element blocks into zeros: out[index[i] - base] = op(out[index[i] - base], values[i]) for
    // i in [0, n). Contributors scattered one after another in a fixed order give the windowed result
    // bit for bit when op(0, x) == init(x) for every value, which exact_from_zero checks (null: true
    // for every value). Null for 16-bit floats (their sums are rounded once, from float slots).
    void (*scatter_elements)(std::byte *out, std::uint64_t base, const std::uint64_t *index, const std::byte *values,
                             std::size_t n);
    // The same with 32-bit block numbers (the allgather's records where every block number fits).
    void (*scatter_elements_narrow)(std::byte *out, std::uint64_t base, const std::uint32_t *index,
                                    const std::byte *values, std::size_t n);
    bool (*exact_from_zero)(const std::byte *values, std::size_t n);
    // 16-bit floats accumulate in float, rounded once at the end: accumulate, finish_partial and
    // collect_elements then work on float slots (accumulator_size bytes per element), and narrow
    // rounds n of them into the element type. Null (and accumulator_size == element size) otherwise.
    void (*narrow)(std::byte *out, const std::byte *wide, std::size_t n);
    std::size_t accumulator_size;
};

// Requires is_sparse_capable(type, op).
const ReduceKernels &kernels_for(ElementType type, ReduceOp op);

}  // namespace mpix::sparse::detail
