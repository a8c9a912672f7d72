#include "algo/window_reducer.h"

#include <algorithm>

namespace mpix::sparse::detail {

// Runs that wait to be reduced together (more go in turns): four contributors a window at 100%.
constexpr std::size_t kMaxPendingRuns = 64;

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
    // Reserved here, so that nothing between begin and finish allocates (or fails).
    res_.pending_runs.clear();
    res_.pending_runs.reserve(kMaxPendingRuns);
    res_.run_bounds.reserve(2 * kMaxPendingRuns);
    res_.run_sources.reserve(kMaxPendingRuns);
}

void WindowReducer::begin(std::uint64_t base, std::uint64_t span, std::byte *acc) {
    base_ = base;
    span_ = span;
    acc_ = acc;
    res_.pending_runs.clear();
    slots_ = kernels_.narrow != nullptr ? reinterpret_cast<std::byte *>(res_.wide.data()) : acc;
}

void WindowReducer::add(const BlockBatch &batch) {
    if (batch.n == 0) return;
    const std::uint64_t last_block = layout_.num_blocks() - 1;
    const std::uint32_t elems = layout_.block_elems;
    const bool partial_last = batch.last() == last_block && layout_.elems_of(last_block) != elems;
    if (kernels_.accumulate_runs != nullptr && batch.index == nullptr && elems > 1 && !partial_last) {
        if (res_.pending_runs.size() == kMaxPendingRuns) reduce_pending();
        res_.pending_runs.push_back(batch);
        return;
    }
    reduce_pending();  // the runs added before this batch go first
    const auto shift = static_cast<std::int64_t>(batch.first) - static_cast<std::int64_t>(base_);
    std::size_t n = batch.n;
    if (partial_last) {
        // The vector's final block is partial: reduce it on its own with its real length.
        --n;
        kernels_.accumulate(slots_, res_.counts.data(), res_.touched.data(), batch.index ? batch.index + n : nullptr,
                            batch.index ? shift : shift + static_cast<std::int64_t>(n),
                            batch.data + n * layout_.block_bytes(), 1, layout_.elems_of(last_block), elems);
    }
    kernels_.accumulate(slots_, res_.counts.data(), res_.touched.data(), batch.index, shift, batch.data, n, elems,
                        elems);
}

void WindowReducer::reduce_pending() {
    std::vector<BlockBatch> &runs = res_.pending_runs;
    if (runs.empty()) return;
    const std::uint32_t elems = layout_.block_elems;
    const std::size_t block_bytes = layout_.block_bytes();
    // One contributor's runs (ascending, apart) overlap nothing: each is one source.
    bool apart = true;
    for (std::size_t r = 1; r < runs.size() && apart; ++r)
        apart = runs[r].first >= runs[r - 1].first + runs[r - 1].n;
    // A stretch of one source is what accumulate does with it.
    auto one = [&](std::uint64_t first, const std::byte *data, std::uint64_t n) {
        kernels_.accumulate(slots_, res_.counts.data(), res_.touched.data(), nullptr,
                            static_cast<std::int64_t>(first - base_), data, n, elems, elems);
    };
    if (apart) {
        for (const BlockBatch &b : runs)
            one(b.first, b.data, b.n);
        runs.clear();
        return;
    }
    // Stretches between consecutive run ends: the runs that cover a stretch are its sources, in the
    // order they were added.
    std::vector<std::uint64_t> &bounds = res_.run_bounds;
    bounds.clear();
    for (const BlockBatch &b : runs) {
        bounds.push_back(b.first);
        bounds.push_back(b.first + b.n);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    std::vector<const std::byte *> &sources = res_.run_sources;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
        const std::uint64_t from = bounds[i], to = bounds[i + 1];
        sources.clear();
        for (const BlockBatch &b : runs)
            if (b.first <= from && to <= b.first + b.n) sources.push_back(b.data + (from - b.first) * block_bytes);
        if (sources.size() == 1)
            one(from, sources[0], to - from);
        else if (sources.size() > 1)
            kernels_.accumulate_runs(slots_, res_.counts.data(), res_.touched.data(),
                                     static_cast<std::size_t>(from - base_), sources.data(), sources.size(), to - from,
                                     elems, elems);
    }
    runs.clear();
}

std::size_t WindowReducer::finish(std::uint32_t contributors) {
    reduce_pending();
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
