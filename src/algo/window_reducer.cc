#include "algo/window_reducer.h"

#include <algorithm>

namespace mpix::sparse::detail {

std::uint64_t window_blocks(const BlockLayout &layout, std::uint64_t min_blocks) {
    return std::max<std::uint64_t>(min_blocks, (std::size_t{256} << 10) / layout.block_bytes());
}

WindowReducer::WindowReducer(const BlockLayout &layout, const ReduceKernels &kernels, StreamResources &resources,
                             std::uint64_t max_span)
    : layout_(layout), kernels_(kernels), res_(resources) {
    // Kept zero between windows: each window clears only what it touched.
    res_.counts.assign(static_cast<std::size_t>(max_span), 0u);
    res_.touched.assign(static_cast<std::size_t>(max_span + 63) / 64, 0u);
    res_.union_.resize(static_cast<std::size_t>(max_span));
    if (kernels_.narrow != nullptr) res_.wide.resize(static_cast<std::size_t>(max_span) * layout.block_elems);
}

void WindowReducer::begin(std::uint64_t base, std::uint64_t span, std::byte *acc) {
    base_ = base;
    span_ = span;
    acc_ = acc;
    slots_ = kernels_.narrow != nullptr ? reinterpret_cast<std::byte *>(res_.wide.data()) : acc;
}

void WindowReducer::add(const BlockBatch &batch) {
    if (batch.n == 0) return;
    const std::uint64_t last_block = layout_.num_blocks() - 1;
    const std::uint32_t elems = layout_.block_elems;
    const auto shift = static_cast<std::int64_t>(batch.first) - static_cast<std::int64_t>(base_);
    std::size_t n = batch.n;
    if (batch.last() == last_block && layout_.elems_of(last_block) != elems) {
        // The vector's final block is partial: reduce it on its own with its real length.
        --n;
        kernels_.accumulate(slots_, res_.counts.data(), res_.touched.data(), batch.index ? batch.index + n : nullptr,
                            batch.index ? shift : shift + static_cast<std::int64_t>(n),
                            batch.data + n * layout_.block_bytes(), 1, layout_.elems_of(last_block), elems);
    }
    kernels_.accumulate(slots_, res_.counts.data(), res_.touched.data(), batch.index, shift, batch.data, n, elems,
                        elems);
}

std::size_t WindowReducer::finish(std::uint32_t contributors) {
    // From the slots the contributions touched (cost follows the union, not the span); counts and
    // marks are cleared on the way.
    const std::size_t elem_bytes = layout_.elem_size;
    if (layout_.block_elems == 1) {
        const std::size_t u =
            kernels_.collect_elements(slots_, res_.counts.data(), res_.touched.data(), static_cast<std::size_t>(span_),
                                      contributors, res_.union_.data());
        if (kernels_.narrow != nullptr)
            for (std::size_t k = 0; k < u; ++k) {
                const std::size_t i = res_.union_[k];
                kernels_.narrow(acc_ + i * elem_bytes, slots_ + i * kernels_.accumulator_size, 1);
            }
        return u;
    }
    std::size_t u = 0;
    const std::size_t block_bytes = layout_.block_bytes();
    const std::size_t slot_bytes = std::size_t{layout_.block_elems} * kernels_.accumulator_size;
    const std::size_t words = static_cast<std::size_t>((span_ + 63) / 64);
    for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t bits = res_.touched[w];
        res_.touched[w] = 0;
        while (bits != 0) {
            const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
            res_.union_[u++] = static_cast<std::uint32_t>(i);
            const std::size_t elems = layout_.elems_of(base_ + i);
            if (res_.counts[i] < contributors && kernels_.finish_partial)
                kernels_.finish_partial(slots_ + i * slot_bytes, elems);
            if (kernels_.narrow != nullptr) kernels_.narrow(acc_ + i * block_bytes, slots_ + i * slot_bytes, elems);
            res_.counts[i] = 0;
        }
    }
    return u;
}

}  // namespace mpix::sparse::detail
