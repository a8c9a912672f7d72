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
}

void WindowReducer::begin(std::uint64_t base, std::uint64_t span, std::byte *acc) {
    base_ = base;
    span_ = span;
    acc_ = acc;
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
        kernels_.accumulate(acc_, res_.counts.data(), res_.touched.data(), batch.index ? batch.index + n : nullptr,
                            batch.index ? shift : shift + static_cast<std::int64_t>(n),
                            batch.data + n * layout_.block_bytes(), 1, layout_.elems_of(last_block), elems);
    }
    kernels_.accumulate(acc_, res_.counts.data(), res_.touched.data(), batch.index, shift, batch.data, n, elems, elems);
}

std::size_t WindowReducer::finish(std::uint32_t contributors) {
    // From the slots the contributions touched (cost follows the union, not the span); counts and
    // marks are cleared on the way.
    if (layout_.block_elems == 1)
        return kernels_.collect_elements(acc_, res_.counts.data(), res_.touched.data(), static_cast<std::size_t>(span_),
                                         contributors, res_.union_.data());
    std::size_t u = 0;
    const std::size_t block_bytes = layout_.block_bytes();
    const std::size_t words = static_cast<std::size_t>((span_ + 63) / 64);
    for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t bits = res_.touched[w];
        res_.touched[w] = 0;
        while (bits != 0) {
            const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
            res_.union_[u++] = static_cast<std::uint32_t>(i);
            if (res_.counts[i] < contributors && kernels_.finish_partial)
                kernels_.finish_partial(acc_ + i * block_bytes, layout_.elems_of(base_ + i));
            res_.counts[i] = 0;
        }
    }
    return u;
}

}  // namespace mpix::sparse::detail
