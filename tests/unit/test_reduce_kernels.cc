// Reduction kernels: init/combine per op, contributor counting, the partial last block, -0.0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/reduce_kernels.h"

namespace mpix::sparse::detail {
namespace {

// Scratch "touched" bitmap for up to 64 slots.
std::vector<std::uint64_t> touched(1, 0);

template <class T>
std::byte *bytes(std::vector<T> &v) {
    return reinterpret_cast<std::byte *>(v.data());
}
template <class T>
const std::byte *bytes(const std::vector<T> &v) {
    return reinterpret_cast<const std::byte *>(v.data());
}

TEST(ReduceKernels, SparseCapableMatrix) {
    EXPECT_TRUE(is_sparse_capable(ElementType::F32, ReduceOp::Sum));
    EXPECT_FALSE(is_sparse_capable(ElementType::F32, ReduceOp::Max)) << "max over floats has no zero identity";
    EXPECT_FALSE(is_sparse_capable(ElementType::F64, ReduceOp::Bor));
    EXPECT_TRUE(is_sparse_capable(ElementType::U64, ReduceOp::Max));
    EXPECT_FALSE(is_sparse_capable(ElementType::I32, ReduceOp::Max)) << "signed max: identity is INT_MIN";
    EXPECT_TRUE(is_sparse_capable(ElementType::I64, ReduceOp::Lxor));
}

TEST(ReduceKernels, AccumulateCountsContributorsAndCombines) {
    touched[0] = 0;
    const ReduceKernels &k = kernels_for(ElementType::I32, ReduceOp::Sum);
    std::vector<std::int32_t> acc(12, -1);  // 3 slots of 4
    std::vector<std::uint32_t> counts(3, 0);
    std::vector<std::int32_t> a{1, 2, 3, 4, 10, 20, 30, 40};
    std::vector<std::uint32_t> index{0, 2};
    k.accumulate(bytes(acc), counts.data(), touched.data(), index.data(), 0, bytes(a), 2, 4, 4);
    std::vector<std::int32_t> b{5, 5, 5, 5};
    k.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 2, bytes(b), 1, 4, 4);
    EXPECT_EQ(counts, (std::vector<std::uint32_t>{1, 0, 2}));
    EXPECT_EQ(touched[0] & 7u, 0b101u) << "first contributions mark their slots";
    EXPECT_EQ(acc, (std::vector<std::int32_t>{1, 2, 3, 4, -1, -1, -1, -1, 15, 25, 35, 45}));
}

TEST(ReduceKernels, PartialBlockUsesItsLengthAndTheBlockStride) {
    const ReduceKernels &k = kernels_for(ElementType::F32, ReduceOp::Sum);
    std::vector<float> acc(8, 9.0f);
    std::vector<std::uint32_t> counts(2, 0);
    std::vector<float> tail{1, 2};
    k.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 1, bytes(tail), 1, 2,
                 4);  // slot 1, 2 of 4 elements
    EXPECT_EQ(acc, (std::vector<float>{9, 9, 9, 9, 1, 2, 9, 9}));
}

TEST(ReduceKernels, LogicalOpsNormalizeEvenForOneContributor) {
    for (ReduceOp op : {ReduceOp::Lor, ReduceOp::Lxor}) {
        const ReduceKernels &k = kernels_for(ElementType::U32, op);
        std::vector<std::uint32_t> acc(3), counts(1, 0);
        std::vector<std::uint32_t> x{5, 0, 7};
        k.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 0, bytes(x), 1, 3, 3);
        EXPECT_EQ(acc, (std::vector<std::uint32_t>{1, 0, 1}));
        std::vector<std::uint32_t> y{9, 9, 0};
        k.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 0, bytes(y), 1, 3, 3);
        if (op == ReduceOp::Lor)
            EXPECT_EQ(acc, (std::vector<std::uint32_t>{1, 1, 1}));
        else
            EXPECT_EQ(acc, (std::vector<std::uint32_t>{0, 1, 1}));
    }
}

TEST(ReduceKernels, BitwiseMaxAndWrappingSum) {
    std::vector<std::uint64_t> acc(2), x{6, 1}, y{3, 8};
    std::vector<std::uint32_t> counts(1, 0);
    const ReduceKernels &bor = kernels_for(ElementType::U64, ReduceOp::Bor);
    bor.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 0, bytes(x), 1, 2, 2);
    bor.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 0, bytes(y), 1, 2, 2);
    EXPECT_EQ(acc, (std::vector<std::uint64_t>{7, 9}));
    counts[0] = 0;
    const ReduceKernels &max = kernels_for(ElementType::U64, ReduceOp::Max);
    max.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 0, bytes(x), 1, 2, 2);
    max.accumulate(bytes(acc), counts.data(), touched.data(), nullptr, 0, bytes(y), 1, 2, 2);
    EXPECT_EQ(acc, (std::vector<std::uint64_t>{6, 8}));
    std::vector<std::int32_t> i{INT32_MAX}, j{1};
    const ReduceKernels &sum = kernels_for(ElementType::I32, ReduceOp::Sum);
    sum.combine(bytes(i), bytes(j), 1);
    EXPECT_EQ(i[0], INT32_MIN) << "signed sums wrap like MPI implementations'";
}

TEST(ReduceKernels, FloatPartialSumTurnsNegativeZeroPositive) {
    // MPI_Allreduce computes -0.0 + (+0.0 from ranks without the block) = +0.0.
    const ReduceKernels &k = kernels_for(ElementType::F64, ReduceOp::Sum);
    ASSERT_NE(k.finish_partial, nullptr);
    std::vector<double> acc{-0.0, 3.0, -2.5};
    k.finish_partial(bytes(acc), 3);
    EXPECT_FALSE(std::signbit(acc[0]));
    EXPECT_EQ(acc[1], 3.0);
    EXPECT_EQ(acc[2], -2.5);
    EXPECT_EQ(kernels_for(ElementType::I64, ReduceOp::Sum).finish_partial, nullptr);
}

TEST(ReduceKernels, InPlaceInitLeavesDataAndAddsLater) {
    // The aggregator reduces into the output buffer, which may hold its own contribution already.
    const ReduceKernels &k = kernels_for(ElementType::F32, ReduceOp::Sum);
    std::vector<float> buf{1, 2, 3, 4};
    std::vector<std::uint32_t> counts(1, 0);
    k.accumulate(bytes(buf), counts.data(), touched.data(), nullptr, 0, bytes(buf), 1, 4, 4);
    std::vector<float> other{10, 10, 10, 10};
    k.accumulate(bytes(buf), counts.data(), touched.data(), nullptr, 0, bytes(other), 1, 4, 4);
    EXPECT_EQ(buf, (std::vector<float>{11, 12, 13, 14}));
}

}  // namespace
}  // namespace mpix::sparse::detail
