// Randomized equality with MPI_Allreduce: every sparse-path type and op, counts around block edges,
// densities from 0 to 1, four overlap patterns, in place or not, every algorithm. Results must be
// bitwise equal to MPI_Allreduce's (inputs are integer-valued, so float sums are exact in any order)
// and identical on every rank.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

struct OpCase {
    MPI_Op mpi;
    ReduceOp op;
    const char *name;
};

const OpCase kOps[] = {{MPI_SUM, ReduceOp::Sum, "SUM"},    {MPI_BOR, ReduceOp::Bor, "BOR"},
                       {MPI_BXOR, ReduceOp::Bxor, "BXOR"}, {MPI_LOR, ReduceOp::Lor, "LOR"},
                       {MPI_LXOR, ReduceOp::Lxor, "LXOR"}, {MPI_MAX, ReduceOp::Max, "MAX"}};

// The communicator of an (algorithm, block size), from the cache.
MPI_Comm comm_for(CommCache &comms, const std::string &algorithm, std::uint32_t block) {
    return comms.get(algorithm + "/" + std::to_string(block),
                     {{"mpix_sparse_algorithm", algorithm},
                      {"mpix_sparse_block_size", std::to_string(block)},
                      // Let tiny counts take the sparse path too, to test its edges.
                      {"mpix_sparse_dense_below", algorithm == "auto" ? "65536" : "0"}});
}

struct Case {
    TypeCase type;
    OpCase op;
    std::uint64_t count;
    double density;
    Pattern pattern;
    bool in_place;
    std::string algorithm;
    std::uint32_t block;
    unsigned seed;

    std::string describe() const {
        std::ostringstream s;
        s << type.name << " " << op.name << " count=" << count << " density=" << density << " " << name_of(pattern)
          << (in_place ? " in-place" : "") << " algorithm=" << algorithm << " block=" << block << " seed=" << seed;
        return s.str();
    }
};

void check_case(const Case &c, CommCache &comms) {
    SCOPED_TRACE(c.describe());
    const int rank = world_rank(), size = world_size();
    const std::size_t elem = element_size(c.type.type);
    std::vector<std::byte> input = rank_input(c.type.type, c.count, c.block, c.pattern, c.density, rank, size, c.seed,
                                              c.seed * 977 + static_cast<unsigned>(rank));
    std::vector<std::byte> expected(input.size() + 1), ours(input.size() + 1, std::byte{0x5c});
    ASSERT_EQ(
        MPI_Allreduce(input.data(), expected.data(), static_cast<int>(c.count), c.type.mpi, c.op.mpi, MPI_COMM_WORLD),
        MPI_SUCCESS);
    MPI_Comm comm = comm_for(comms, c.algorithm, c.block);
    int rc;
    if (c.in_place) {
        if (!input.empty()) std::memcpy(ours.data(), input.data(), input.size());
        rc = MPIX_Sparse_allreduce(MPI_IN_PLACE, ours.data(), static_cast<MPI_Count>(c.count), c.type.mpi, c.op.mpi,
                                   comm);
    } else {
        rc = MPIX_Sparse_allreduce(input.data(), ours.data(), static_cast<MPI_Count>(c.count), c.type.mpi, c.op.mpi,
                                   comm);
    }
    EXPECT_EQ(rc, MPI_SUCCESS);
    const std::vector<std::byte> got(ours.begin(), ours.begin() + static_cast<std::ptrdiff_t>(input.size()));
    const std::vector<std::byte> want(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(input.size()));
    const long long bad = first_difference(got, want, elem);
    EXPECT_EQ(bad, -1) << "rank " << rank << " differs from MPI_Allreduce first at element " << bad;
    EXPECT_EQ(ours.back(), std::byte{0x5c}) << "wrote past the end of recvbuf";
    EXPECT_TRUE(same_on_all_ranks(got.data(), got.size(), MPI_COMM_WORLD));
    const MPIX_Sparse_stats s = stats_of(comm);
    int expected_algorithm = -1;  // auto: any
    if (c.algorithm == "dense" || size == 1 || c.count == 0)
        expected_algorithm = MPIX_SPARSE_ALGORITHM_DENSE;
    else if (c.algorithm == "aggregator")
        expected_algorithm = MPIX_SPARSE_ALGORITHM_AGGREGATOR;
    else if (c.algorithm == "allgather")
        expected_algorithm = MPIX_SPARSE_ALGORITHM_ALLGATHER;
    if (expected_algorithm >= 0) {
        EXPECT_EQ(s.last_algorithm, expected_algorithm);
    }
}

TEST(AllreduceRandomized, MatchesMpiAllreduce) {
    std::mt19937_64 rng(77);  // the same sequence on every rank: cases are collective
    CommCache comms;
    const auto types = sparse_types();
    const std::uint64_t counts[] = {0, 1, 5, 255, 256, 257, 1000, 4099, 65536, 100003, 300000};
    const double densities[] = {0.0, 0.01, 0.3, 1.0};
    const Pattern patterns[] = {Pattern::Random, Pattern::Identical, Pattern::Disjoint, Pattern::Clustered};
    const char *algorithms[] = {"auto", "aggregator", "aggregator", "allgather", "dense"};
    const std::uint32_t blocks[] = {256, 7, 64};
    for (int i = 0; i < 160; ++i) {
        Case c;
        c.type = types[rng() % types.size()];
        do {
            c.op = kOps[rng() % 6];
        } while (!is_sparse_capable(c.type.type, c.op.op));
        c.count = counts[rng() % std::size(counts)];
        c.density = densities[rng() % 4];
        c.pattern = patterns[rng() % 4];
        c.in_place = rng() % 2 == 0;
        c.algorithm = algorithms[rng() % 5];
        c.block = blocks[rng() % 3];
        c.seed = static_cast<unsigned>(i + 1);
        check_case(c, comms);
        if (!everywhere(!::testing::Test::HasFailure())) break;
    }
}

TEST(AllreduceRandomized, EveryTypeAndOpAtLeastOnce) {
    CommCache comms;
    unsigned seed = 1000;
    for (const TypeCase &t : sparse_types())
        for (const OpCase &op : kOps) {
            if (!is_sparse_capable(t.type, op.op)) continue;
            check_case(Case{t, op, 20000, 0.05, Pattern::Random, false, "aggregator", 256, ++seed}, comms);
        }
    ASSERT_TRUE(everywhere(!::testing::Test::HasFailure()));
}

TEST(AllreduceRandomized, OutsideTheSparsePathFallsBackToDense) {
    // Types and ops without a zero identity or kernel: served by MPI_Allreduce, still exact.
    const int rank = world_rank();
    struct Fallback {
        MPI_Datatype type;
        MPI_Op op;
        std::size_t size;
    };
    const Fallback cases[] = {{MPI_FLOAT, MPI_MAX, 4},  {MPI_INT, MPI_PROD, 4}, {MPI_SHORT, MPI_SUM, 2},
                              {MPI_DOUBLE, MPI_MIN, 8}, {MPI_INT, MPI_MAX, 4},  {MPI_UNSIGNED_CHAR, MPI_BAND, 1}};
    for (const Fallback &f : cases) {
        const int count = 100000;
        std::vector<unsigned char> in(count * f.size), out(count * f.size), ref(count * f.size);
        std::mt19937 rng(static_cast<unsigned>(rank) + 3);
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = (i % f.size == 0) ? static_cast<unsigned char>(rng() % 3) : 0;
        MPI_Allreduce(in.data(), ref.data(), count, f.type, f.op, MPI_COMM_WORLD);
        MPIX_Sparse_stats_reset(MPI_COMM_WORLD);
        const MPIX_Sparse_stats before = stats_of(MPI_COMM_WORLD);
        EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), count, f.type, f.op, MPI_COMM_WORLD), MPI_SUCCESS);
        EXPECT_EQ(out, ref);
        const MPIX_Sparse_stats after = stats_of(MPI_COMM_WORLD);
        EXPECT_EQ(after.dense_fallbacks - before.dense_fallbacks, 1);
        EXPECT_EQ(after.last_algorithm, MPIX_SPARSE_ALGORITHM_DENSE);
    }
    // A pair type with MAXLOC, and a user-defined op.
    std::vector<int> in(2000, rank + 1), out(2000), ref(2000);
    for (std::size_t i = 1; i < in.size(); i += 2)
        in[i] = rank;
    MPI_Allreduce(in.data(), ref.data(), 1000, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 1000, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(out, ref);
    MPI_Op user;
    MPI_Op_create(
        [](void *a, void *b, int *len, MPI_Datatype *) {
            for (int i = 0; i < *len; ++i)
                static_cast<int *>(b)[i] += 2 * static_cast<int *>(a)[i];
        },
        0, &user);
    MPI_Allreduce(in.data(), ref.data(), 2000, MPI_INT, user, MPI_COMM_WORLD);
    EXPECT_EQ(MPIX_Sparse_allreduce(in.data(), out.data(), 2000, MPI_INT, user, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(out, ref);
    MPI_Op_free(&user);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
