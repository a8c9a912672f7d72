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

// Reduces the batches in order with `kernels` into a window preset to `initial`, twice on the same
// reducer and scratch (a window must leave them clear for the next); returns the second window and
// sets *union_out to its union's positions.
std::vector<std::byte> reduce(const ReduceKernels &kernels, const BlockLayout &layout, std::uint64_t base,
                              std::uint64_t span, std::vector<Batch> &batches, const std::vector<std::byte> &initial,
                              std::uint32_t contributors, std::vector<std::uint32_t> *union_out) {
    StreamResources resources;
    WindowReducer reducer(layout, kernels, resources, span);
    std::vector<std::byte> acc;
    for (int round = 0; round < 2; ++round) {
        acc = initial;
        reducer.begin(base, span, acc.data());
        const std::size_t block_bytes = layout.block_bytes();
        for (Batch &b : batches) {
            const std::byte *data = b.in_place ? acc.data() + (b.first - base) * block_bytes : b.data.data();
            reducer.add(BlockBatch{b.first, b.index.empty() ? nullptr : b.index.data(), data, b.n});
        }
        const std::size_t u = reducer.finish(contributors);
        union_out->assign(reducer.union_positions(), reducer.union_positions() + u);
    }
    return acc;
}

// A contiguous run of n float blocks of `elems`, element e of block i = value(i, e).
template <class F>
Batch float_run(std::uint64_t first, std::size_t n, std::uint32_t elems, F value) {
    Batch b;
    b.first = first;
    b.n = n;
    std::vector<float> v(n * elems);
    for (std::size_t i = 0; i < n; ++i)
        for (std::uint32_t e = 0; e < elems; ++e)
            v[i * elems + e] = value(i, e);
    b.data.resize(v.size() * sizeof(float));
    std::memcpy(b.data.data(), v.data(), b.data.size());
    return b;
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

// Float sums depend on the order of their terms: seven contributors over one stretch (two groups of
// sources in one pass each), and more runs than the reducer holds at once (reduced in turns), give
// the bits of one contribution after another. Terms of 1e8 and 1 make any other order visible.
TEST(WindowReducer, FloatSumsKeepTheirOrderBeyondFourSourcesAndInTurns) {
    const std::uint32_t elems = 16;
    const BlockLayout layout{64 * elems, elems, 4};
    const ReduceKernels &fused = kernels_for(ElementType::F32, ReduceOp::Sum);
    ReduceKernels one_by_one = fused;
    one_by_one.accumulate_runs = nullptr;
    auto term = [](int r, std::size_t i, std::uint32_t e) {
        const int k = (r + static_cast<int>(i + e)) % 4;
        return k == 0 ? 1e8f : k == 1 ? 1.0f : k == 2 ? -1e8f : 0.5f + static_cast<float>(r);
    };
    std::vector<Batch> seven;
    for (int r = 0; r < 7; ++r)
        seven.push_back(float_run(3, 20, elems, [&](std::size_t i, std::uint32_t e) { return term(r, i, e); }));
    std::vector<Batch> many;
    for (int r = 0; r < 300; ++r)  // overlapping runs of 1-3 blocks over 8 slots
        many.push_back(float_run(static_cast<std::uint64_t>(r % 8), r % 8 + 1 + r % 3 > 8 ? 8 - r % 8 : 1 + r % 3,
                                 elems, [&](std::size_t i, std::uint32_t e) { return term(r, i, e); }));
    for (auto *batches : {&seven, &many}) {
        const std::vector<std::byte> initial(64 * elems * 4, std::byte{0x5a});
        const auto contributors = static_cast<std::uint32_t>(batches->size());
        std::vector<std::uint32_t> uf, ur;
        const auto got = reduce(fused, layout, 0, 64, *batches, initial, contributors, &uf);
        const auto want = reduce(one_by_one, layout, 0, 64, *batches, initial, contributors, &ur);
        EXPECT_EQ(uf, ur);
        EXPECT_EQ(got, want) << batches->size() << " runs";
    }
}

// The kernel itself, with the slot among its sources in any place (as accumulate allows): the same
// as one accumulate call per source, counts and marks included.
TEST(WindowReducer, AccumulateRunsTakesTheSlotAsASourceAnywhere) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Lor}) {
        const ElementType type = op == ReduceOp::Sum ? ElementType::F32 : ElementType::I32;
        const ReduceKernels &k = kernels_for(type, op);
        const std::size_t elems = 8, nblocks = 3, k_sources = 6;
        std::vector<std::vector<std::int32_t>> data(k_sources, std::vector<std::int32_t>(nblocks * elems));
        for (std::size_t j = 0; j < k_sources; ++j)
            for (std::size_t e = 0; e < data[j].size(); ++e)
                data[j][e] = op == ReduceOp::Sum ? static_cast<std::int32_t>(0x3f800000u + (j * 977 + e * 131) % 5000)
                                                 : static_cast<std::int32_t>((j + e) % 3);
        for (std::size_t in_place_at = 0; in_place_at < k_sources; ++in_place_at) {
            for (std::uint32_t preset : {0u, 2u}) {  // the slots' first contribution, or later ones
                std::vector<std::int32_t> acc1(4 * elems, 7), acc2 = acc1;
                std::vector<std::uint32_t> c1(4, preset), c2 = c1;
                std::vector<std::uint64_t> t1(1, 0), t2 = t1;
                std::vector<const std::byte *> src(k_sources);
                for (std::size_t j = 0; j < k_sources; ++j)
                    src[j] = reinterpret_cast<const std::byte *>(data[j].data());
                src[in_place_at] = reinterpret_cast<const std::byte *>(acc1.data() + elems);  // slots 1..3
                k.accumulate_runs(reinterpret_cast<std::byte *>(acc1.data()), c1.data(), t1.data(), 1, src.data(),
                                  k_sources, nblocks, elems, elems);
                for (std::size_t j = 0; j < k_sources; ++j) {
                    const std::byte *x = j == in_place_at ? reinterpret_cast<const std::byte *>(acc2.data() + elems)
                                                          : reinterpret_cast<const std::byte *>(data[j].data());
                    k.accumulate(reinterpret_cast<std::byte *>(acc2.data()), c2.data(), t2.data(), nullptr, 1, x,
                                 nblocks, elems, elems);
                }
                EXPECT_EQ(acc1, acc2) << "op " << static_cast<int>(op) << ", slot source at " << in_place_at;
                EXPECT_EQ(c1, c2);
                EXPECT_EQ(t1, t2);
            }
        }
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
