// The allgather algorithm's reduction of gathered records on element layouts: pairs scattered into
// output tiles must give what the counted windows give, bit for bit, into either kind of dense sink,
// in cache-sized outputs and in tiled ones; values that zero does not take exactly (-0.0, NaN) must
// send the call to the counted windows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "algo/allgather_allreduce.h"
#include "algo/result_sink.h"
#include "algo/stream_resources.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {
namespace {

struct Contribution {
    std::vector<std::uint64_t> index;  // ascending, unique
    std::vector<float> value;
};

// The ranks' records, back to back, as the allgather delivers them: the count, the block numbers
// (32-bit where every number of the layout fits), padded to 8 bytes, then the values.
std::vector<std::byte> gather(const std::vector<Contribution> &ranks, const BlockLayout &layout,
                              std::uint64_t max_blocks, std::size_t &record_bytes) {
    record_bytes = static_cast<std::size_t>(allgather_record_bytes(layout, max_blocks));
    const std::size_t number_bytes = layout.number_bytes();
    const std::size_t data_at = 8 + (max_blocks * number_bytes + 7) / 8 * 8;
    std::vector<std::byte> all(record_bytes * ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        std::byte *rec = all.data() + r * record_bytes;
        const std::uint64_t n = ranks[r].index.size();
        std::memcpy(rec, &n, 8);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t k = ranks[r].index[i];
            if (number_bytes == 4) {
                const auto narrow = static_cast<std::uint32_t>(k);
                std::memcpy(rec + 8 + i * 4, &narrow, 4);
            } else {
                std::memcpy(rec + 8 + i * 8, &k, 8);
            }
        }
        std::memcpy(rec + data_at, ranks[r].value.data(), n * 4);
    }
    return all;
}

// What MPI_Allreduce of the dense vectors computes in rank order: contributors' values added in
// rank order, + 0.0f once when some rank contributed nothing there (-0.0 + 0.0 is +0.0).
std::vector<float> reference(const std::vector<Contribution> &ranks, std::uint64_t count) {
    std::vector<float> sum(count, 0.0f);
    std::vector<int> seen(count, 0);
    for (const Contribution &c : ranks)
        for (std::size_t i = 0; i < c.index.size(); ++i) {
            const std::uint64_t k = c.index[i];
            sum[k] = seen[k]++ == 0 ? c.value[i] : sum[k] + c.value[i];
        }
    for (std::uint64_t k = 0; k < count; ++k)
        if (seen[k] > 0 && seen[k] < static_cast<int>(ranks.size())) sum[k] = sum[k] + 0.0f;
    return sum;
}

std::vector<Contribution> random_contributions(int ranks, std::uint64_t count, double density, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> magnitude(-1e3f, 1e3f);
    std::vector<Contribution> out(static_cast<std::size_t>(ranks));
    for (Contribution &c : out)
        for (std::uint64_t k = 0; k < count; ++k)
            if (std::uniform_real_distribution<>(0, 1)(rng) < density) {
                c.index.push_back(k);
                float v = magnitude(rng);
                if (v == 0.0f) v = 1.0f;
                c.value.push_back(v * (rng() % 2 ? 1e-3f : 1.0f));  // mixed scales, so the order of adds shows
            }
    return out;
}

std::uint64_t max_blocks_of(const std::vector<Contribution> &ranks) {
    std::uint64_t m = 0;
    for (const Contribution &c : ranks)
        m = std::max<std::uint64_t>(m, c.index.size());
    return m;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

enum class SinkKind { WritesZeros, ZerosPresent };

// Reduces into an output poisoned where the sink kind lets it be: everywhere when the sink writes the
// zeros, only on the union when the zeros are already there (the block path's scan wrote them).
std::vector<float> reduce(const std::vector<Contribution> &ranks, std::uint64_t count, SinkKind kind) {
    const BlockLayout layout{count, 1, 4};
    const std::uint64_t max_blocks = max_blocks_of(ranks);
    std::size_t record_bytes = 0;
    const std::vector<std::byte> all = gather(ranks, layout, max_blocks, record_bytes);
    std::vector<float> out(count, kind == SinkKind::WritesZeros ? 7.5f : 0.0f);
    if (kind == SinkKind::ZerosPresent)
        for (const Contribution &c : ranks)
            for (std::uint64_t k : c.index)
                out[k] = 7.5f;
    DenseResultSink sink(reinterpret_cast<std::byte *>(out.data()), layout,
                         kind == SinkKind::WritesZeros ? DenseResultSink::Zeros::Written
                                                       : DenseResultSink::Zeros::Present);
    StreamResources resources;
    reduce_gathered(all.data(), static_cast<int>(ranks.size()), record_bytes, layout, ElementType::F32, ReduceOp::Sum,
                    max_blocks, resources, sink);
    return out;
}

TEST(AllgatherReduction, ScatteredPairsGiveTheCountedResultBitForBit) {
    // 1000 floats stay cached (the output is its own tile); 1.5M (6 MiB) go through scratch tiles.
    for (const std::uint64_t count : {std::uint64_t{1000}, std::uint64_t{1} << 20 | std::uint64_t{1} << 19}) {
        for (const double density : {0.002, 0.05, 0.6}) {
            const auto ranks = random_contributions(3, count, density, static_cast<unsigned>(count) + 7);
            const std::vector<float> want = reference(ranks, count);
            for (const SinkKind kind : {SinkKind::WritesZeros, SinkKind::ZerosPresent}) {
                SCOPED_TRACE(::testing::Message()
                             << "count " << count << " density " << density << " sink "
                             << (kind == SinkKind::WritesZeros ? "writes zeros" : "zeros present"));
                EXPECT_TRUE(same_bits(reduce(ranks, count, kind), want));
            }
        }
    }
}

TEST(AllgatherReduction, NegativeZeroKeepsItsSignWhereEveryRankSentIt) {
    // Scattered into zeros, -0.0 would come out +0.0; the counted windows keep MPI's answer.
    std::vector<Contribution> ranks(3);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        ranks[r].index = {5, 9, 20};
        ranks[r].value = {-0.0f, r == 0 ? -0.0f : 1.5f, 2.0f};
    }
    ranks[2].index = {5, 9};  // index 20 from two ranks only
    ranks[2].value = {-0.0f, 1.5f};
    for (const SinkKind kind : {SinkKind::WritesZeros, SinkKind::ZerosPresent}) {
        const std::vector<float> out = reduce(ranks, 64, kind);
        EXPECT_TRUE(std::signbit(out[5])) << "-0.0 from every rank sums to -0.0";
        EXPECT_EQ(out[9], 3.0f);
        EXPECT_EQ(out[20], 4.0f);
        EXPECT_TRUE(same_bits(out, reference(ranks, 64)));
    }
}

TEST(AllgatherReduction, NaNPassesThroughUnchanged) {
    std::vector<Contribution> ranks(2);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    ranks[0] = {{3}, {nan}};
    ranks[1] = {{4}, {1.0f}};
    const std::vector<float> out = reduce(ranks, 16, SinkKind::WritesZeros);
    EXPECT_TRUE(std::isnan(out[3]));
    EXPECT_EQ(out[4], 1.0f);
    EXPECT_EQ(out[0], 0.0f);
}

TEST(AllgatherReduction, RecordSizeThatOverflowsFitsNothing) {
    // The most blocks a rank has is one peer's word (the agreement's maximum). 1032 * m wraps to 8
    // when 129 * m = 1 (mod 2^61): a size computed per block (1024 bytes of data and 8 of number)
    // that wraps would turn into a 16-byte record that the packing then overruns.
    const BlockLayout layout{std::uint64_t{1} << 20, 256, 4};
    std::uint64_t inverse = 129;  // Newton's iteration: each step doubles the correct low bits
    for (int i = 0; i < 6; ++i)
        inverse *= 2 - 129 * inverse;
    const std::uint64_t wraps = inverse & ((std::uint64_t{1} << 61) - 1);
    ASSERT_EQ(wraps * 1032, 8u);
    EXPECT_EQ(allgather_record_bytes(layout, wraps), UINT64_MAX);
    EXPECT_EQ(allgather_record_bytes(layout, UINT64_MAX), UINT64_MAX);
    // 11 bytes a block (7 one-byte elements and a 32-bit number): 11 * ((2^64 - 1) / 11) fits, the
    // count and padding do not.
    EXPECT_EQ(allgather_record_bytes(BlockLayout{100, 7, 1}, UINT64_MAX / 11), UINT64_MAX);
    // Numbers and data that fit apart but not together (8-byte numbers: 2^33 blocks).
    const BlockLayout wide{std::uint64_t{1} << 34, 2, 4};
    ASSERT_EQ(wide.number_bytes(), 8u);
    EXPECT_EQ(allgather_record_bytes(wide, UINT64_MAX / 8), UINT64_MAX);
    // Count, numbers padded to 8, data padded to 8.
    EXPECT_EQ(allgather_record_bytes(layout, 3), 8u + 16 + 3 * 1024);  // 32-bit numbers
    EXPECT_EQ(allgather_record_bytes(BlockLayout{10, 1, 2}, 3), 32u);  // 8 + 12 -> 16, + 6 -> 8
    EXPECT_EQ(allgather_record_bytes(wide, 3), 8u + 24 + 24);
}

// Block numbers are 32-bit up to 2^32 blocks, the largest of them 2^32 - 1, and 64-bit beyond:
// both give the pairs back where they were (the sink collects them, so no output is allocated).
TEST(AllgatherReduction, BlockNumbersOnBothSidesOf32Bits) {
    for (const std::uint64_t count : {std::uint64_t{1} << 32, (std::uint64_t{1} << 33) + 5}) {
        const BlockLayout layout{count, 1, 4};
        EXPECT_EQ(layout.number_bytes(), count <= (std::uint64_t{1} << 32) ? 4u : 8u);
        std::vector<Contribution> ranks(2);
        ranks[0] = {{0, 70000, count - 1}, {1.0f, 2.0f, 3.0f}};
        ranks[1] = {{70000, (std::uint64_t{1} << 31) + 3, count - 2, count - 1}, {0.5f, 4.0f, 5.0f, 6.0f}};
        const std::uint64_t max_blocks = max_blocks_of(ranks);
        std::size_t record_bytes = 0;
        const std::vector<std::byte> all = gather(ranks, layout, max_blocks, record_bytes);
        CollectingResultSink sink(layout);
        StreamResources resources;
        reduce_gathered(all.data(), 2, record_bytes, layout, ElementType::F32, ReduceOp::Sum, max_blocks, resources,
                        sink);
        std::vector<std::int64_t> indices;
        std::vector<std::byte> bytes;
        sink.finish(indices, bytes);
        std::vector<float> values(indices.size());
        ASSERT_EQ(bytes.size(), values.size() * 4);
        std::memcpy(values.data(), bytes.data(), bytes.size());
        const std::vector<std::int64_t> want_indices = {0, 70000, (std::int64_t{1} << 31) + 3,
                                                        static_cast<std::int64_t>(count - 2),
                                                        static_cast<std::int64_t>(count - 1)};
        EXPECT_EQ(indices, want_indices) << "count " << count;
        EXPECT_EQ(values, (std::vector<float>{1.0f, 2.5f, 4.0f, 5.0f, 9.0f})) << "count " << count;
    }
}

TEST(ReduceKernels, ExactFromZeroRejectsZerosAndNaNs) {
    const ReduceKernels &f = kernels_for(ElementType::F32, ReduceOp::Sum);
    ASSERT_NE(f.exact_from_zero, nullptr);
    auto exact = [&](std::vector<float> v) {
        return f.exact_from_zero(reinterpret_cast<const std::byte *>(v.data()), v.size());
    };
    EXPECT_TRUE(exact({1.0f, -2.0f, 1e-40f, std::numeric_limits<float>::infinity()}));
    EXPECT_FALSE(exact({1.0f, -0.0f}));
    EXPECT_FALSE(exact({0.0f}));
    EXPECT_FALSE(exact({2.0f, std::numeric_limits<float>::quiet_NaN()}));
    // Integer ops take every value exactly from zero; 16-bit floats round once from float slots.
    EXPECT_EQ(kernels_for(ElementType::I32, ReduceOp::Sum).exact_from_zero, nullptr);
    EXPECT_NE(kernels_for(ElementType::U64, ReduceOp::Max).scatter_elements, nullptr);
    EXPECT_EQ(kernels_for(ElementType::F16, ReduceOp::Sum).scatter_elements, nullptr);
}

TEST(ReduceKernels, ScatterElementsCombinesAtIndexMinusBase) {
    const ReduceKernels &k = kernels_for(ElementType::U32, ReduceOp::Max);
    std::vector<std::uint32_t> tile(4, 0);
    const std::vector<std::uint64_t> index{100, 102, 103};
    const std::vector<std::uint32_t> a{5, 9, 1}, b{7, 3};
    k.scatter_elements(reinterpret_cast<std::byte *>(tile.data()), 100, index.data(),
                       reinterpret_cast<const std::byte *>(a.data()), a.size());
    k.scatter_elements(reinterpret_cast<std::byte *>(tile.data()), 100, index.data(),
                       reinterpret_cast<const std::byte *>(b.data()), b.size());
    EXPECT_EQ(tile, (std::vector<std::uint32_t>{7, 0, 9, 1}));
}

}  // namespace
}  // namespace mpix::sparse::detail
