// Canonical element input: sorted, duplicates combined in input order, bad indices caught.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "core/pair_sort.h"

namespace mpix::sparse::detail {
namespace {

TEST(PairSort, SortedUniqueInputIsUsedInPlace) {
    std::vector<std::int64_t> idx{1, 5, 9};
    std::vector<float> val{1, 2, 3};
    PairSortScratch s;
    SortedPairs out;
    ASSERT_TRUE(sort_pairs(idx.data(), reinterpret_cast<const std::byte *>(val.data()), 3, 4, 10,
                           kernels_for(ElementType::F32, ReduceOp::Sum), s, out));
    EXPECT_EQ(out.indices, idx.data());
    EXPECT_EQ(out.size, 3u);
}

TEST(PairSort, DuplicatesCombineAndOrderIsStable) {
    std::mt19937_64 rng(5);
    const std::uint64_t count = 5000;
    std::vector<std::int64_t> idx(20000);
    std::vector<double> val(idx.size());
    std::map<std::int64_t, double> expected;
    for (std::size_t i = 0; i < idx.size(); ++i) {
        idx[i] = static_cast<std::int64_t>(rng() % count);
        val[i] = static_cast<double>(static_cast<int>(rng() % 17) - 8) * 0.25;
        expected[idx[i]] += val[i];  // input order, as the library combines
    }
    PairSortScratch s;
    SortedPairs out;
    ASSERT_TRUE(sort_pairs(idx.data(), reinterpret_cast<const std::byte *>(val.data()), idx.size(), 8, count,
                           kernels_for(ElementType::F64, ReduceOp::Sum), s, out));
    ASSERT_EQ(out.size, expected.size());
    std::size_t j = 0;
    for (const auto &[k, v] : expected) {
        EXPECT_EQ(out.indices[j], k);
        double got;
        std::memcpy(&got, out.values + j * 8, 8);
        EXPECT_EQ(got, v);
        ++j;
    }
}

TEST(PairSort, IndexOutOfRangeIsRejected) {
    PairSortScratch s;
    SortedPairs out;
    std::vector<float> val{1, 1};
    for (std::vector<std::int64_t> idx : {std::vector<std::int64_t>{3, 10}, std::vector<std::int64_t>{-1, 2}}) {
        EXPECT_FALSE(sort_pairs(idx.data(), reinterpret_cast<const std::byte *>(val.data()), 2, 4, 10,
                                kernels_for(ElementType::F32, ReduceOp::Sum), s, out));
    }
}

}  // namespace
}  // namespace mpix::sparse::detail
