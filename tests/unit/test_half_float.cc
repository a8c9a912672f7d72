// 16-bit floats: conversions (every value, every tie), and windows that accumulate in float and round
// once, which pairwise 16-bit adds would not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "algo/stream_resources.h"
#include "algo/window_reducer.h"
#include "core/half_float.h"
#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {
namespace {

bool is_nan16(std::uint16_t h, int exponent_bits) {
    const int mantissa_bits = 15 - exponent_bits;
    const std::uint16_t exp_mask = static_cast<std::uint16_t>(((1u << exponent_bits) - 1) << mantissa_bits);
    return (h & exp_mask) == exp_mask && (h & ((1u << mantissa_bits) - 1)) != 0;
}

TEST(HalfFloat, EveryFloat16RoundTrips) {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float f = half_to_float(static_cast<std::uint16_t>(h));
        if (is_nan16(static_cast<std::uint16_t>(h), 5)) {
            EXPECT_TRUE(std::isnan(f));
            EXPECT_TRUE(is_nan16(float_to_half(f), 5));
            continue;
        }
        ASSERT_EQ(float_to_half(f), h) << "value " << f;
    }
}

TEST(HalfFloat, Float16RoundsToNearestEven) {
    // Between each pair of adjacent finite positive halves (subnormals included): the midpoint goes
    // to the even one, anything off the midpoint to the nearer one.
    for (std::uint16_t h = 0; h < 0x7bff; ++h) {
        const double lo = half_to_float(h), hi = half_to_float(static_cast<std::uint16_t>(h + 1));
        const auto mid = static_cast<float>((lo + hi) / 2);  // exact: halves have 11 significant bits
        const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : h;
        ASSERT_EQ(float_to_half(mid), even) << "tie above " << lo;
        ASSERT_EQ(float_to_half(std::nextafter(mid, 1e9f)), h + 1) << "just above the tie above " << lo;
        ASSERT_EQ(float_to_half(std::nextafter(mid, -1e9f)), h) << "just below the tie above " << lo;
        ASSERT_EQ(float_to_half(-mid), even | 0x8000u);
    }
    EXPECT_EQ(float_to_half(65504.0f), 0x7bffu);
    EXPECT_EQ(float_to_half(65519.99f), 0x7bffu);
    EXPECT_EQ(float_to_half(65520.0f), 0x7c00u) << "the tie above the largest half rounds to infinity";
    EXPECT_EQ(float_to_half(1e10f), 0x7c00u);
    EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00u);
    EXPECT_EQ(float_to_half(1e-10f), 0u) << "far below the smallest subnormal";
    EXPECT_EQ(float_to_half(-0.0f), 0x8000u);
}

TEST(HalfFloat, EveryBFloat16RoundTripsAndTiesGoToEven) {
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const float f = bfloat16_to_float(static_cast<std::uint16_t>(b));
        if (is_nan16(static_cast<std::uint16_t>(b), 8)) {
            EXPECT_TRUE(is_nan16(float_to_bfloat16(f), 8));
            continue;
        }
        ASSERT_EQ(float_to_bfloat16(f), b);
        if ((b & 0x7f80u) == 0x7f80u) continue;  // infinity: no next value
        // The float halfway to the next bfloat16 has the low 16 bits 0x8000.
        const float mid = bits_float((b << 16) | 0x8000u);
        const std::uint32_t even = (b & 1) ? b + 1 : b;
        ASSERT_EQ(float_to_bfloat16(mid), even);
        ASSERT_EQ(float_to_bfloat16(bits_float((b << 16) | 0x8001u)), b + 1);
        ASSERT_EQ(float_to_bfloat16(bits_float((b << 16) | 0x7fffu)), b);
    }
    EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80u) << "rounds up to infinity";
}

// One window of `contributions` (each one block of the layout), reduced in order.
std::vector<std::uint16_t> reduce_window(ElementType type, const std::vector<std::vector<std::uint16_t>> &contributions,
                                         std::uint32_t block_elems, std::uint32_t expected_contributors) {
    const BlockLayout layout{block_elems, block_elems, 2};
    const ReduceKernels &k = kernels_for(type, ReduceOp::Sum);
    StreamResources resources;
    WindowReducer reducer(layout, k, resources, 1);
    std::vector<std::uint16_t> acc(block_elems, 0xdeadu);
    reducer.begin(0, 1, reinterpret_cast<std::byte *>(acc.data()));
    for (const auto &c : contributions)
        reducer.add(BlockBatch{0, nullptr, reinterpret_cast<const std::byte *>(c.data()), 1});
    EXPECT_EQ(reducer.finish(expected_contributors), 1u);
    return acc;
}

TEST(HalfFloat, WindowsAccumulateInFloatAndRoundOnce) {
    const std::uint16_t h2048 = float_to_half(2048), h1 = float_to_half(1);
    // Pairwise in float16: 2048 + 1 ties to 2048, and again; in float: 2050, exact in float16.
    EXPECT_EQ(float_to_half(half_to_float(float_to_half(2048 + 1.0f)) + 1.0f), h2048) << "the pairwise result";
    for (std::uint32_t block : {1u, 4u}) {
        const std::vector<std::uint16_t> a(block, h2048), b(block, h1);
        const auto sum = reduce_window(ElementType::F16, {a, b, b}, block, 3);
        for (std::uint16_t v : sum)
            EXPECT_EQ(half_to_float(v), 2050.0f) << "block of " << block;
    }
    // bfloat16 keeps 8 significant bits: 256 + 1 + 1 pairwise is 256, in float 258.
    const std::uint16_t b256 = float_to_bfloat16(256), b1 = float_to_bfloat16(1);
    const auto sum = reduce_window(ElementType::BF16, {{b256, b256}, {b1, b1}, {b1, b1}}, 2, 3);
    EXPECT_EQ(bfloat16_to_float(sum[0]), 258.0f);
    EXPECT_EQ(bfloat16_to_float(sum[1]), 258.0f);
}

TEST(HalfFloat, Float16KernelsGiveTheConversionsBitsOnEveryValue) {
    // The float16 sum kernels (F16C where the CPU has it) against the portable conversions: every
    // half widened alone and added to another, then narrowed; a length that leaves a tail after the
    // 8-wide steps; and narrowing alone over a spread of floats (subnormals, ties, NaNs, overflow).
    const ReduceKernels &k = kernels_for(ElementType::F16, ReduceOp::Sum);
    const std::size_t n = 65536 + 5;
    std::vector<std::uint16_t> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<std::uint16_t>(i);
        b[i] = static_cast<std::uint16_t>(i * 40503u + 7u);
    }
    for (const bool second : {false, true}) {
        std::vector<float> acc(n, -1.0f);
        std::uint32_t counts[1] = {0};
        std::uint64_t touched[1] = {0};
        k.accumulate(reinterpret_cast<std::byte *>(acc.data()), counts, touched, nullptr, 0,
                     reinterpret_cast<const std::byte *>(a.data()), 1, n, n);
        if (second)
            k.accumulate(reinterpret_cast<std::byte *>(acc.data()), counts, touched, nullptr, 0,
                         reinterpret_cast<const std::byte *>(b.data()), 1, n, n);
        std::vector<std::uint16_t> out(n);
        k.narrow(reinterpret_cast<std::byte *>(out.data()), reinterpret_cast<const std::byte *>(acc.data()), n);
        for (std::size_t i = 0; i < n; ++i) {
            if (second && is_nan16(a[i], 5) && is_nan16(b[i], 5)) {
                // Which NaN's payload an addition of two NaNs keeps depends on the operand order the
                // compiler picked (addition commutes): only NaN-ness is defined.
                ASSERT_TRUE(is_nan16(out[i], 5)) << "halves " << a[i] << " and " << b[i];
                continue;
            }
            const float wide = second ? half_to_float(a[i]) + half_to_float(b[i]) : half_to_float(a[i]);
            ASSERT_EQ(out[i], float_to_half(wide)) << "halves " << a[i] << " and " << b[i] << (second ? " added" : "");
        }
    }
    std::vector<float> floats;
    for (std::uint64_t x = 0; x < (1ull << 32); x += 4093)
        floats.push_back(bits_float(static_cast<std::uint32_t>(x)));
    for (float f : {65519.99f, 65520.0f, 1e-10f, -0.0f, 2049.0f, 2051.0f, std::numeric_limits<float>::infinity()})
        floats.push_back(f);
    std::vector<std::uint16_t> narrowed(floats.size());
    k.narrow(reinterpret_cast<std::byte *>(narrowed.data()), reinterpret_cast<const std::byte *>(floats.data()),
             floats.size());
    for (std::size_t i = 0; i < floats.size(); ++i)
        ASSERT_EQ(narrowed[i], float_to_half(floats[i])) << "float bits " << float_bits(floats[i]);
}

TEST(HalfFloat, PartialSlotsAddPositiveZero) {
    // One of two ranks contributed -0.0: MPI_Allreduce computes -0.0 + +0.0 = +0.0.
    const auto sum = reduce_window(ElementType::F16, {{0x8000u, float_to_half(-3)}}, 2, 2);
    EXPECT_EQ(sum[0], 0x0000u);
    EXPECT_EQ(half_to_float(sum[1]), -3.0f);
}

TEST(HalfFloat, DuplicatePairsCombineInTheirType) {
    const ReduceKernels &k = kernels_for(ElementType::BF16, ReduceOp::Sum);
    std::uint16_t acc = 0, one = float_to_bfloat16(1.5f);
    k.init(reinterpret_cast<std::byte *>(&acc), reinterpret_cast<const std::byte *>(&one), 1);
    k.combine(reinterpret_cast<std::byte *>(&acc), reinterpret_cast<const std::byte *>(&one), 1);
    EXPECT_EQ(bfloat16_to_float(acc), 3.0f);
    EXPECT_TRUE(is_sparse_capable(ElementType::F16, ReduceOp::Sum));
    EXPECT_FALSE(is_sparse_capable(ElementType::BF16, ReduceOp::Max)) << "no zero identity";
    EXPECT_EQ(element_size(ElementType::F16), 2u);
}

}  // namespace
}  // namespace mpix::sparse::detail
