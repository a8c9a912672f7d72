// MPIX_FLOAT16 and MPIX_BFLOAT16 against a float64 reference of every rank's inputs: the sparse
// paths round once (within half an ulp of the float sum), the dense path once per combination; every
// rank gets the same bits. MAX/MIN (dense) are exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/half_float.h"
#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

struct HalfCase {
    const char *name;
    MPI_Datatype type;
    float (*to_float)(std::uint16_t);
    std::uint16_t (*from_float)(float);
    double unit_roundoff;  // half an ulp, relative: 2^-11 (binary16), 2^-8 (bfloat16)
    double smallest;       // the smallest positive value (subnormal for binary16)
};

std::vector<HalfCase> half_cases() {
    return {{"float16", MPIX_FLOAT16, &half_to_float, &float_to_half, std::ldexp(1.0, -11), std::ldexp(1.0, -24)},
            {"bfloat16", MPIX_BFLOAT16, &bfloat16_to_float, &float_to_bfloat16, std::ldexp(1.0, -8),
             std::ldexp(1.0, -133)}};
}

// This rank's input: blocks on at `density`, values of mixed sign and magnitude (not integers, so
// the order and width of the additions show).
std::vector<std::uint16_t> make_input(const HalfCase &c, std::size_t count, double density, unsigned seed) {
    const int rank = world_rank(), size = world_size();
    const auto on = block_pattern(Pattern::Random, (count + 255) / 256, density, rank, size, seed);
    std::vector<std::uint16_t> v(count, 0);
    std::mt19937_64 rng(seed * 31 + static_cast<unsigned>(rank));
    std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-6, 6);
    for (std::size_t k = 0; k < on.size(); ++k)
        if (on[k])
            for (std::size_t i = k * 256; i < std::min(count, k * 256 + 256); ++i)
                v[i] = c.from_float(std::ldexp(mantissa(rng), exponent(rng)));
    return v;
}

// Every rank's inputs, to compute the exact sum and magnitude sum in float64.
void reference(const HalfCase &c, const std::vector<std::uint16_t> &in, std::vector<double> &sum,
               std::vector<double> &magnitude) {
    const int size = world_size();
    std::vector<std::uint16_t> all(in.size() * static_cast<std::size_t>(size));
    MPI_Allgather(in.data(), static_cast<int>(in.size()), MPI_UINT16_T, all.data(), static_cast<int>(in.size()),
                  MPI_UINT16_T, MPI_COMM_WORLD);
    sum.assign(in.size(), 0.0);
    magnitude.assign(in.size(), 0.0);
    for (int r = 0; r < size; ++r)
        for (std::size_t i = 0; i < in.size(); ++i) {
            const double x = c.to_float(all[static_cast<std::size_t>(r) * in.size() + i]);
            sum[i] += x;
            magnitude[i] += std::fabs(x);
        }
}

TEST(HalfTypes, NamedTwoByteTypes) {
    for (const HalfCase &c : half_cases()) {
        ASSERT_NE(c.type, MPI_DATATYPE_NULL);
        int size = 0, length = 0;
        MPI_Type_size(c.type, &size);
        EXPECT_EQ(size, 2);
        char name[MPI_MAX_OBJECT_NAME];
        MPI_Type_get_name(c.type, name, &length);
        EXPECT_EQ(std::string(name), std::string("MPIX_") + (c.type == MPIX_FLOAT16 ? "FLOAT16" : "BFLOAT16"));
    }
    EXPECT_NE(MPIX_FLOAT16, MPIX_BFLOAT16);
}

TEST(HalfTypes, SumsMatchTheFloat64ReferenceWithinTheirBound) {
    const int size = world_size();
    const std::size_t count = 200000 + 77;  // a partial last block
    for (const HalfCase &c : half_cases()) {
        // "hierarchy": node and leader levels with a node broadcast, even on one machine; the
        // aggregator on both, so that each level rounds once (under auto the leader level may plan
        // dense, one rounding per combination, while the stats name the node level's algorithm:
        // 4 nodes x 2 ranks at 100% once MPI_Allreduce's cost was refitted).
        for (const char *algorithm : {"auto", "aggregator", "allgather", "dense", "hierarchy"}) {
            const bool hierarchy = std::string(algorithm) == "hierarchy";
            SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", hierarchy ? "aggregator" : algorithm},
                                             {"mpix_sparse_hierarchical", hierarchy ? "on" : "off"}});
            for (double density : {0.01, 0.3, 1.0}) {
                const auto in = make_input(c, count, density, 5 + static_cast<unsigned>(density * 100));
                std::vector<double> exact, magnitude;
                reference(c, in, exact, magnitude);
                std::vector<std::uint16_t> out(count, 0x7e00u);
                ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), c.type, MPI_SUM,
                                                comm.get()),
                          MPI_SUCCESS);
                EXPECT_TRUE(same_on_all_ranks(out.data(), count * 2, MPI_COMM_WORLD));
                const bool dense = stats_of(comm.get()).last_algorithm == MPIX_SPARSE_ALGORITHM_DENSE;
                long long worst = -1;
                double worst_excess = 0;
                for (std::size_t i = 0; i < count; ++i) {
                    // Sparse: one rounding of the float sum (a hierarchy adds one per node sum);
                    // dense: one rounding per combination.
                    const double float_sum = size * std::ldexp(1.0, -24) * magnitude[i];
                    const double bound = dense ? size * c.unit_roundoff * magnitude[i] + c.smallest
                                               : c.unit_roundoff * std::fabs(exact[i]) + float_sum + c.smallest +
                                                     (hierarchy ? c.unit_roundoff * magnitude[i] : 0.0);
                    const double error = std::fabs(static_cast<double>(c.to_float(out[i])) - exact[i]);
                    if (!(error <= bound) && error - bound > worst_excess) {
                        worst = static_cast<long long>(i);
                        worst_excess = error - bound;
                    }
                }
                EXPECT_EQ(worst, -1) << c.name << ", " << algorithm << ", density " << density << ": element " << worst
                                     << " is " << worst_excess << " beyond the bound";
            }
        }
    }
}

TEST(HalfTypes, SparsePathRoundsOnceAtTheEnd) {
    const int size = world_size();
    if (size < 2) GTEST_SKIP() << "one rank has nothing to add";
    // 2048 on rank 0 and 1 on every other rank: float16 steps by 2 there, so adding 1 at a time in
    // float16 ties back to 2048 each time; the float sum rounded once is 2048 + (size - 1), rounded.
    // One level: a hierarchy rounds each node's sum before the leaders add them.
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_hierarchical", "off"}});
    const std::size_t count = 1 << 16;
    std::vector<std::uint16_t> in(count, 0), out(count);
    for (std::size_t i = 256; i < 512; ++i)
        in[i] = float_to_half(world_rank() == 0 ? 2048.0f : 1.0f);
    ASSERT_EQ(
        MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPIX_FLOAT16, MPI_SUM, comm.get()),
        MPI_SUCCESS);
    const std::uint16_t want = float_to_half(2048.0f + static_cast<float>(size - 1));
    EXPECT_EQ(out[300], want) << half_to_float(out[300]) << " instead of " << half_to_float(want);
    EXPECT_EQ(out[0], 0u);
}

TEST(HalfTypes, MaxAndMinAreExactOnTheDensePath) {
    const std::size_t count = 50000;
    for (const HalfCase &c : half_cases()) {
        const auto in = make_input(c, count, 0.5, 9);
        const int size = world_size();
        std::vector<std::uint16_t> all(count * static_cast<std::size_t>(size));
        MPI_Allgather(in.data(), static_cast<int>(count), MPI_UINT16_T, all.data(), static_cast<int>(count),
                      MPI_UINT16_T, MPI_COMM_WORLD);
        for (MPI_Op op : {MPI_MAX, MPI_MIN}) {
            std::vector<std::uint16_t> out(count);
            ASSERT_EQ(
                MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), c.type, op, MPI_COMM_WORLD),
                MPI_SUCCESS);
            for (std::size_t i = 0; i < count; ++i) {
                float want = c.to_float(all[i]);
                for (int r = 1; r < size; ++r) {
                    const float x = c.to_float(all[static_cast<std::size_t>(r) * count + i]);
                    want = op == MPI_MAX ? std::max(want, x) : std::min(want, x);
                }
                ASSERT_EQ(c.to_float(out[i]), want) << c.name << " element " << i;
            }
        }
    }
}

// MPI may apply the op in another order on each rank; every rank must still get the same bits: NaN
// (from one rank, from inf - inf, or two NaNs with different payloads) is one canonical NaN, and the
// signed zeros of MAX/MIN do not depend on which rank holds which.
TEST(HalfTypes, EveryRankGetsTheSameBitsForNaNsAndSignedZeros) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP() << "needs two ranks";
    for (const HalfCase &c : half_cases()) {
        const float inf = std::numeric_limits<float>::infinity();
        const float nan_a = std::numeric_limits<float>::quiet_NaN();
        const std::uint16_t nan_b = static_cast<std::uint16_t>(c.from_float(nan_a) | 0x1);  // another payload
        // [0] NaN on rank 0 only; [1] +0 on rank 0, -0 elsewhere; [2] NaNs of two payloads; [3] inf on
        // rank 0, -inf elsewhere (SUM: inf - inf).
        std::vector<std::uint16_t> in(4);
        in[0] = rank == 0 ? c.from_float(nan_a) : c.from_float(3.0f);
        in[1] = c.from_float(rank == 0 ? 0.0f : -0.0f);
        in[2] = rank == 0 ? c.from_float(nan_a) : nan_b;
        in[3] = c.from_float(rank == 0 ? inf : -inf);
        for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_MIN}) {
            std::vector<std::uint16_t> out(4, 0x1234);
            ASSERT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 4, c.type, op, MPI_COMM_WORLD), MPI_SUCCESS);
            std::vector<std::uint16_t> all(4 * static_cast<std::size_t>(size));
            MPI_Allgather(out.data(), 4, MPI_UINT16_T, all.data(), 4, MPI_UINT16_T, MPI_COMM_WORLD);
            for (int r = 1; r < size; ++r)
                for (std::size_t i = 0; i < 4; ++i)
                    EXPECT_EQ(all[static_cast<std::size_t>(r) * 4 + i], all[i])
                        << c.name << " element " << i << " rank " << r;
            EXPECT_EQ(out[0], c.from_float(nan_a)) << c.name;
            EXPECT_EQ(out[2], c.from_float(nan_a)) << c.name;
            if (op == MPI_MAX) {
                EXPECT_EQ(out[1], c.from_float(0.0f)) << c.name;
            } else if (op == MPI_MIN) {
                EXPECT_EQ(out[1], c.from_float(-0.0f)) << c.name;
            } else {
                EXPECT_EQ(out[3], c.from_float(nan_a)) << c.name;
            }
        }
    }
}

TEST(HalfTypes, ElementVariantSumsPairs) {
    const int rank = world_rank(), size = world_size();
    const std::int64_t count = 100000;
    std::vector<std::int64_t> indices;
    std::vector<std::uint16_t> values;
    for (std::int64_t i = rank; i < count; i += 97) {
        indices.push_back(i);
        values.push_back(float_to_half(0.5f + static_cast<float>(i % 5)));
    }
    std::vector<std::uint16_t> out(static_cast<std::size_t>(count), 0x7e00u);
    ASSERT_EQ(MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(indices.size()), indices.data(), values.data(),
                                             out.data(), count, MPIX_FLOAT16, MPI_SUM, MPI_COMM_WORLD),
              MPI_SUCCESS);
    for (std::int64_t i = 0; i < count; ++i) {
        float want = 0;
        for (int r = 0; r < size; ++r)
            if (i >= r && (i - r) % 97 == 0) want += 0.5f + static_cast<float>(i % 5);
        ASSERT_EQ(half_to_float(out[static_cast<std::size_t>(i)]), want) << "index " << i;  // small sums: exact
    }
}

TEST(HalfTypes, ElementVariantMaxCombinesDuplicatesInItsType) {
    // MAX has no zero identity: the dense path, where a rank's duplicate indices are combined first
    // (with the library's op: MPI's own cannot reduce these types).
    const std::int64_t indices[] = {7, 7, 9};
    const std::uint16_t values[] = {float_to_half(1.5f), float_to_half(-2.0f + static_cast<float>(world_rank())),
                                    float_to_half(-4.0f)};
    std::vector<std::uint16_t> out(16, 0x7e00u);
    ASSERT_EQ(MPIX_Sparse_allreduce_elements(3, indices, values, out.data(), 16, MPIX_FLOAT16, MPI_MAX, MPI_COMM_WORLD),
              MPI_SUCCESS);
    const float want7 = std::max(1.5f, -2.0f + static_cast<float>(world_size() - 1));
    EXPECT_EQ(half_to_float(out[7]), want7);
    EXPECT_EQ(half_to_float(out[9]), -4.0f) << "every rank passed -4 there";
    EXPECT_EQ(half_to_float(out[0]), 0.0f);
}

TEST(HalfTypes, OpsOtherThanSumProdMaxMinAreArgumentErrors) {
    SparseComm comm(MPI_COMM_WORLD, {});
    std::vector<std::uint16_t> in(1024, 1), out(1024);
    const int rc = MPIX_Sparse_allreduce(in.data(), out.data(), 1024, MPIX_FLOAT16, MPI_BAND, comm.get());
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_ARG);
    // The element variant checks the same (MPI could not run MPI_BAND on these types either).
    std::int64_t index = 3;
    EXPECT_NE(
        MPIX_Sparse_allreduce_elements(1, &index, in.data(), out.data(), 1024, MPIX_FLOAT16, MPI_BAND, comm.get()),
        MPI_SUCCESS);
    // MPI_OP_NULL is named as such; a zero count moves nothing and is no error, as for any type.
    MPI_Error_class(MPIX_Sparse_allreduce(in.data(), out.data(), 1024, MPIX_FLOAT16, MPI_OP_NULL, comm.get()), &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_ARG);
    EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 0, MPIX_FLOAT16, MPI_BAND, comm.get()), MPI_SUCCESS);
    // The library keeps working after it.
    EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 1024, MPIX_BFLOAT16, MPI_SUM, comm.get()), MPI_SUCCESS);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
