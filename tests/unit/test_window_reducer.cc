// The window reducer: contiguous runs of several contributors reduced together (accumulate_runs)
// give what reducing each batch in turn gives, bit for bit, with the same union.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "algo/stream_resources.h"
#include "algo/window_reducer.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {
namespace {

struct Case {
    ElementType type;
    ReduceOp op;
    std::uint32_t elem_size;
};

// One contributor's batch of a window: blocks [first, first + n) or the listed positions.
struct Batch {
    std::uint64_t first = 0;
    std::vector<std::uint32_t> index;  // empty: a contiguous run
    std::size_t n = 0;
    std::vector<std::byte> data;
    bool in_place = false;  // the contributor's blocks are the window's slots (an in-place aggregator)
};

// Random bytes that are valid values of every case's type; floats get some -0.0 and zeros.
std::vector<std::byte> values(std::mt19937 &rng, const Case &c, std::size_t elems) {
    std::vector<std::byte> out(elems * c.elem_size);
    for (std::size_t e = 0; e < elems; ++e) {
        const std::uint32_t r = rng();
        if (c.type == ElementType::F32) {
            float v = r % 7 == 0    ? -0.0f
                      : r % 11 == 0 ? 0.0f
                                    : static_cast<float>(static_cast<int>(r % 2001) - 1000) / 7;
            std::memcpy(&out[e * 4], &v, 4);
        } else if (c.type == ElementType::F64) {
            double v = r % 7 == 0 ? -0.0 : static_cast<double>(static_cast<int>(r % 2001) - 1000) / 3;
            std::memcpy(&out[e * 8], &v, 8);
        } else {
            for (std::uint32_t b = 0; b < c.elem_size; ++b)
                out[e * c.elem_size + b] = static_cast<std::byte>(r % 3 == 0 ? 0u : (rng() & 0xffu));
        }
    }
    return out;
}

// Reduces the batches in order with `kernels` into a window preset to `initial`; returns the window
// and appends the union's positions to *union_out.
std::vector<std::byte> reduce(const ReduceKernels &kernels, const BlockLayout &layout, std::uint64_t base,
                              std::uint64_t span, std::vector<Batch> &batches, const std::vector<std::byte> &initial,
                              std::uint32_t contributors, std::vector<std::uint32_t> *union_out) {
    StreamResources resources;
    WindowReducer reducer(layout, kernels, resources, span);
    std::vector<std::byte> acc = initial;
    reducer.begin(base, span, acc.data());
    const std::size_t block_bytes = layout.block_bytes();
    for (Batch &b : batches) {
        const std::byte *data = b.in_place ? acc.data() + (b.first - base) * block_bytes : b.data.data();
        reducer.add(BlockBatch{b.first, b.index.empty() ? nullptr : b.index.data(), data, b.n});
    }
    const std::size_t u = reducer.finish(contributors);
    union_out->assign(reducer.union_positions(), reducer.union_positions() + u);
    return acc;
}

TEST(WindowReducer, RunsReducedTogetherMatchOneAfterAnother) {
    const Case cases[] = {{ElementType::F32, ReduceOp::Sum, 4},  {ElementType::F64, ReduceOp::Sum, 8},
                          {ElementType::I32, ReduceOp::Sum, 4},  {ElementType::U64, ReduceOp::Max, 8},
                          {ElementType::I64, ReduceOp::Lor, 8},  {ElementType::U32, ReduceOp::Lxor, 4},
                          {ElementType::U32, ReduceOp::Bxor, 4}, {ElementType::I32, ReduceOp::Bor, 4}};
    std::mt19937 rng(2026);
    int fused_stretches = 0;
    for (const Case &c : cases) {
        const ReduceKernels &fused = kernels_for(c.type, c.op);
        ASSERT_NE(fused.accumulate_runs, nullptr);
        ReduceKernels one_by_one = fused;
        one_by_one.accumulate_runs = nullptr;
        for (int scenario = 0; scenario < 60; ++scenario) {
            const std::uint32_t block_elems = scenario % 3 == 0 ? 4 : 16;
            const std::uint64_t base = 100, span = 24 + rng() % 40;
            // The vector's last block is partial in some scenarios, inside the window.
            const bool partial = scenario % 5 == 0;
            const std::uint64_t count = (base + span) * block_elems - (partial ? 1 : 0);
            const BlockLayout layout{count, block_elems, c.elem_size};
            const std::size_t block_bytes = layout.block_bytes();
            const std::uint32_t contributors = 1 + rng() % 7;
            const bool own_in_place = scenario % 4 == 1;
            std::vector<std::byte> initial(span * block_bytes, std::byte{0x5a});
            std::vector<Batch> batches;
            for (std::uint32_t w = 0; w < contributors; ++w) {
                // Each contributor: a few ascending runs, or one list of positions (a packed message).
                const bool listed = w > 0 && rng() % 3 == 0;
                std::uint64_t at = base + rng() % 4;
                while (at < base + span) {
                    const std::uint64_t n = std::min<std::uint64_t>(1 + rng() % (span / 2), base + span - at);
                    Batch b;
                    b.first = at;
                    if (listed) {
                        for (std::uint64_t k = 0; k < n; ++k)
                            if (rng() % 2 == 0) b.index.push_back(static_cast<std::uint32_t>(k));
                        if (b.index.empty()) b.index.push_back(0);
                        b.n = b.index.size();
                    } else {
                        b.n = n;
                    }
                    b.data = values(rng, c, b.n * block_elems);
                    b.data.resize(b.n * block_bytes);
                    if (w == 0 && own_in_place && !listed) {
                        // The contributor's values already lie in the window (in place).
                        std::memcpy(initial.data() + (b.first - base) * block_bytes, b.data.data(), b.data.size());
                        b.in_place = true;
                    }
                    batches.push_back(std::move(b));
                    at += n + rng() % 6;
                }
            }
            for (std::size_t i = 1; i < batches.size(); ++i)
                if (batches[i].index.empty() && batches[i - 1].index.empty() &&
                    batches[i].first < batches[i - 1].first + batches[i - 1].n)
                    ++fused_stretches;  // runs that overlap: reduced together
            std::vector<std::uint32_t> union_fused, union_ref;
            const auto got = reduce(fused, layout, base, span, batches, initial, contributors, &union_fused);
            const auto want = reduce(one_by_one, layout, base, span, batches, initial, contributors, &union_ref);
            ASSERT_EQ(union_fused, union_ref) << "scenario " << scenario;
            for (std::uint32_t pos : union_ref)
                ASSERT_EQ(0, std::memcmp(got.data() + pos * block_bytes, want.data() + pos * block_bytes,
                                         layout.bytes_of(base + pos)))
                    << "scenario " << scenario << ", slot " << pos << ", type " << static_cast<int>(c.type) << ", op "
                    << static_cast<int>(c.op);
        }
    }
    EXPECT_GT(fused_stretches, 100) << "the scenarios must reduce overlapping runs together";
}

// More runs than the reducer holds at once: they are reduced in turns, in order.
TEST(WindowReducer, ManyRunsAreReducedInTurns) {
    const BlockLayout layout{64 * 4, 4, 4};
    const ReduceKernels &fused = kernels_for(ElementType::I32, ReduceOp::Sum);
    ReduceKernels one_by_one = fused;
    one_by_one.accumulate_runs = nullptr;
    std::vector<Batch> batches;
    for (int r = 0; r < 300; ++r) {  // 300 one-block runs over the same 8 slots: overlapping, in turns
        Batch b;
        b.first = static_cast<std::uint64_t>(r % 8);
        b.n = 1 + static_cast<std::size_t>(r % 3);
        if (b.first + b.n > 8) b.n = 8 - b.first;
        std::vector<std::int32_t> v(b.n * 4);
        for (std::size_t e = 0; e < v.size(); ++e)
            v[e] = r * 31 + static_cast<std::int32_t>(e);
        b.data.resize(v.size() * 4);
        std::memcpy(b.data.data(), v.data(), b.data.size());
        batches.push_back(std::move(b));
    }
    std::vector<std::byte> initial(64 * 16, std::byte{0});
    std::vector<std::uint32_t> uf, ur;
    const auto got = reduce(fused, layout, 0, 64, batches, initial, 300, &uf);
    const auto want = reduce(one_by_one, layout, 0, 64, batches, initial, 300, &ur);
    EXPECT_EQ(uf, ur);
    EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace mpix::sparse::detail
