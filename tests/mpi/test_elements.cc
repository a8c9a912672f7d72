// The element-sparse variant against a dense MPI_Allreduce reference: duplicates, overlap from none
// to total, nnz from 0 to count, both outputs, every algorithm.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

enum class Overlap { None, Random, Total };

struct ElementCase {
    std::int64_t count;
    double fraction;  // nnz / count per rank (duplicates included)
    Overlap overlap;
    bool duplicates;
    std::string algorithm;
    unsigned seed;
    std::string describe() const {
        std::ostringstream s;
        s << "count=" << count << " nnz/count=" << fraction << " overlap="
          << (overlap == Overlap::None     ? "none"
              : overlap == Overlap::Random ? "random"
                                           : "total")
          << (duplicates ? " duplicates" : "") << " algorithm=" << algorithm << " seed=" << seed;
        return s.str();
    }
};

// Integer-valued doubles and pairs in unsorted order.
void make_pairs(const ElementCase &c, int rank, int size, std::vector<std::int64_t> &idx, std::vector<double> &val) {
    std::mt19937_64 rng(c.seed * 1000 + static_cast<unsigned>(c.overlap == Overlap::Total ? 0 : rank));
    const auto nnz = static_cast<std::int64_t>(c.fraction * static_cast<double>(c.count));
    idx.clear();
    val.clear();
    for (std::int64_t i = 0; i < nnz; ++i) {
        std::int64_t k;
        if (c.overlap == Overlap::None) {
            // Rank r owns indices congruent to r modulo size.
            const std::int64_t slots = std::max<std::int64_t>(1, (c.count - rank + size - 1) / size);
            if (c.count <= rank) break;
            k = rank + size * static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(slots));
        } else {
            k = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.count));
        }
        idx.push_back(k);
        val.push_back(static_cast<double>(static_cast<int>(rng() % 9) - 4));
        if (c.duplicates && rng() % 3 == 0) {
            idx.push_back(k);
            val.push_back(static_cast<double>(rng() % 5));
        }
    }
    if (c.overlap == Overlap::Total) {
        // Same indices on every rank, rank-dependent values.
        std::mt19937_64 vr(c.seed + static_cast<unsigned>(rank));
        for (double &v : val)
            v = static_cast<double>(vr() % 7);
    }
}

class ElementComms {
  public:
    MPI_Comm get(const std::string &algorithm) {
        auto it = comms_.find(algorithm);
        if (it == comms_.end())
            it = comms_
                     .emplace(algorithm, std::make_unique<SparseComm>(MPI_COMM_WORLD,
                                                                      std::vector<std::pair<std::string, std::string>>{
                                                                          {"mpix_sparse_algorithm", algorithm}}))
                     .first;
        return it->second->get();
    }

  private:
    std::map<std::string, std::unique_ptr<SparseComm>> comms_;
};

void check_element_case(const ElementCase &c, ElementComms &comms) {
    SCOPED_TRACE(c.describe());
    const int rank = world_rank(), size = world_size();
    std::vector<std::int64_t> idx;
    std::vector<double> val;
    make_pairs(c, rank, size, idx, val);
    // Reference: densify (duplicates summed) and MPI_Allreduce; the union of indices via MPI_LOR.
    std::vector<double> dense(static_cast<std::size_t>(c.count), 0.0), want(dense.size());
    std::vector<int> present(dense.size(), 0), union_(dense.size());
    for (std::size_t i = 0; i < idx.size(); ++i) {
        dense[static_cast<std::size_t>(idx[i])] += val[i];
        present[static_cast<std::size_t>(idx[i])] = 1;
    }
    MPI_Allreduce(dense.data(), want.data(), static_cast<int>(c.count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(present.data(), union_.data(), static_cast<int>(c.count), MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Comm comm = comms.get(c.algorithm);

    std::vector<double> out(dense.size() + 1, -99.0);
    EXPECT_EQ(MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(idx.size()), idx.data(), val.data(), out.data(),
                                             c.count, MPI_DOUBLE, MPI_SUM, comm),
              MPI_SUCCESS);
    EXPECT_EQ(out.back(), -99.0) << "wrote past count";
    out.pop_back();
    EXPECT_EQ(out, want) << "dense output differs";

    MPIX_Sparse_vector v = nullptr;
    EXPECT_EQ(MPIX_Sparse_allreduce_elements_sparse(static_cast<MPI_Count>(idx.size()), idx.data(), val.data(), c.count,
                                                    MPI_DOUBLE, MPI_SUM, comm, &v),
              MPI_SUCCESS);
    ASSERT_NE(v, nullptr);
    MPI_Count n = 0;
    const std::int64_t *ri = nullptr;
    const void *rv = nullptr;
    EXPECT_EQ(MPIX_Sparse_vector_get(v, &n, &ri, &rv), MPI_SUCCESS);
    std::vector<std::int64_t> expected_idx;
    for (std::int64_t k = 0; k < c.count; ++k)
        if (union_[static_cast<std::size_t>(k)]) expected_idx.push_back(k);
    const std::vector<std::int64_t> got_idx(ri, ri + n);
    EXPECT_EQ(got_idx, expected_idx) << "sparse output must hold exactly the union, sorted";
    if (got_idx == expected_idx) {
        const auto *values = static_cast<const double *>(rv);
        for (MPI_Count j = 0; j < n; ++j)
            EXPECT_EQ(values[j], want[static_cast<std::size_t>(ri[j])]) << ri[j];
    }
    EXPECT_TRUE(same_on_all_ranks(got_idx.data(), got_idx.size() * 8, MPI_COMM_WORLD));
    EXPECT_EQ(MPIX_Sparse_vector_free(&v), MPI_SUCCESS);
    EXPECT_EQ(v, nullptr);
}

TEST(Elements, RandomizedAgainstDenseReference) {
    std::mt19937_64 rng(99);
    ElementComms comms;
    const std::int64_t counts[] = {1, 17, 1000, 65536, 200003};
    const double fractions[] = {0.0, 0.001, 0.01, 0.2, 1.0, 2.5};
    const char *algorithms[] = {"auto", "aggregator", "allgather", "dense"};
    for (int i = 0; i < 60; ++i) {
        ElementCase c;
        c.count = counts[rng() % 5];
        c.fraction = fractions[rng() % 6];
        c.overlap = static_cast<Overlap>(rng() % 3);
        c.duplicates = rng() % 2 == 0;
        c.algorithm = algorithms[rng() % 4];
        c.seed = static_cast<unsigned>(i + 1);
        check_element_case(c, comms);
        if (!everywhere(!::testing::Test::HasFailure())) break;
    }
}

TEST(Elements, AllgatherScattersNonZeroPairsIntoCachedAndTiledOutputs) {
    // No value is zero, so the allgather's reduction scatters the pairs (the randomized test above
    // mostly sends zeros and so the counted windows); 700000 doubles (5.6 MB) go through output tiles.
    const int rank = world_rank();
    ElementComms comms;
    for (const std::int64_t count : {std::int64_t{5000}, std::int64_t{700000}}) {
        std::mt19937_64 rng(static_cast<unsigned>(count) + static_cast<unsigned>(rank));
        std::vector<std::int64_t> idx;
        std::vector<double> val;
        std::vector<double> dense(static_cast<std::size_t>(count), 0.0), want(dense.size());
        for (std::int64_t i = 0; i < count / 50; ++i) {
            idx.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(count)));
            val.push_back(static_cast<double>(1 + rng() % 9));
            dense[static_cast<std::size_t>(idx.back())] += val.back();
        }
        MPI_Allreduce(dense.data(), want.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (const char *algorithm : {"allgather", "auto"}) {
            SCOPED_TRACE(::testing::Message() << "count " << count << " algorithm " << algorithm);
            std::vector<double> out(dense.size() + 1, -99.0);
            EXPECT_EQ(MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(idx.size()), idx.data(), val.data(),
                                                     out.data(), count, MPI_DOUBLE, MPI_SUM, comms.get(algorithm)),
                      MPI_SUCCESS);
            EXPECT_EQ(out.back(), -99.0) << "wrote past count";
            out.pop_back();
            EXPECT_EQ(out, want);
        }
    }
}

TEST(Elements, ZeroPairsOnSomeOrAllRanks) {
    const int rank = world_rank();
    std::vector<float> out(5000, 1.0f);
    // All ranks empty: the result is all zeros.
    EXPECT_EQ(MPIX_Sparse_allreduce_elements(0, nullptr, nullptr, out.data(), 5000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(std::count(out.begin(), out.end(), 0.0f), 5000);
    // Only rank 0 has pairs.
    std::vector<std::int64_t> idx{4999, 0, 4999};
    std::vector<float> val{1, 2, 3};
    EXPECT_EQ(MPIX_Sparse_allreduce_elements(rank == 0 ? 3 : 0, idx.data(), val.data(), out.data(), 5000, MPI_FLOAT,
                                             MPI_SUM, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(out[0], 2.0f);
    EXPECT_EQ(out[4999], 4.0f);
    EXPECT_EQ(std::count(out.begin(), out.end(), 0.0f), 4998);
}

TEST(Elements, OpsAndTypesOutsideTheSparsePath) {
    // MPI_PROD has no zero identity: a dense path serves it, with absent entries as zeros.
    const int size = world_size();
    std::vector<std::int64_t> idx{2, 7, 2};
    std::vector<int> val{3, 5, 4};
    std::vector<int> out(10, -1);
    EXPECT_EQ(
        MPIX_Sparse_allreduce_elements(3, idx.data(), val.data(), out.data(), 10, MPI_INT, MPI_PROD, MPI_COMM_WORLD),
        MPI_SUCCESS);
    int expect2 = 1, expect7 = 1;
    for (int r = 0; r < size; ++r) {
        expect2 *= 12;
        expect7 *= 5;
    }
    EXPECT_EQ(out[2], expect2);
    EXPECT_EQ(out[7], expect7);
    EXPECT_EQ(out[0], 0);
    MPIX_Sparse_vector v = nullptr;
    EXPECT_EQ(
        MPIX_Sparse_allreduce_elements_sparse(3, idx.data(), val.data(), 10, MPI_INT, MPI_PROD, MPI_COMM_WORLD, &v),
        MPI_SUCCESS);
    MPI_Count n = 0;
    const std::int64_t *ri;
    const void *rv;
    MPIX_Sparse_vector_get(v, &n, &ri, &rv);
    ASSERT_EQ(n, 2);
    EXPECT_EQ(ri[0], 2);
    EXPECT_EQ(static_cast<const int *>(rv)[1], expect7);
    MPIX_Sparse_vector_free(&v);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
