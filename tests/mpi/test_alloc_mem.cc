// Buffers from MPIX_Sparse_alloc_mem, which the ranks of a machine read in place: results bitwise
// equal to MPI_Allreduce's whichever buffers are shared (send, receive, both, in place), outputs
// whose old contents are garbage (an aggregator reducing into its output writes its shard's zeros
// itself), and payloads really read in place where ranks share memory (MPIX_Sparse_stats).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <sstream>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

// Bytes from MPIX_Sparse_alloc_mem or from the heap, freed on destruction.
class Buffer {
  public:
    Buffer(std::size_t bytes, bool shared) : shared_(shared), heap_(shared ? 0 : bytes) {
        if (shared) {
            EXPECT_EQ(MPIX_Sparse_alloc_mem(static_cast<MPI_Aint>(bytes), MPI_INFO_NULL, &data_), MPI_SUCCESS);
        } else {
            data_ = heap_.data();
        }
    }
    ~Buffer() {
        if (shared_) MPIX_Sparse_free_mem(data_);
    }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    std::byte *data() const { return static_cast<std::byte *>(data_); }
    std::vector<std::byte> copy(std::size_t n) const { return {data(), data() + n}; }

  private:
    bool shared_;
    std::vector<std::byte> heap_;
    void *data_ = nullptr;
};

// Whether this rank shares memory with another rank of MPI_COMM_WORLD through the library: MPI sees
// a node of two or more ranks, shared segments are on, and no test setting splits the node.
bool shares_memory() {
    const char *bytes = std::getenv("MPIX_SPARSE_SHARED_MEMORY_BYTES");
    if ((bytes != nullptr && std::string(bytes) == "0") || std::getenv("MPIX_SPARSE_TEST_RANKS_PER_NODE") != nullptr)
        return false;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int n = 0;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n > 1;
}

struct Case {
    TypeCase type;
    MPI_Op op;
    std::uint64_t count;
    double density;
    Pattern pattern;
    bool shared_send, shared_recv, in_place;
    std::string algorithm;
    std::uint32_t block;
    unsigned seed;

    std::string describe() const {
        std::ostringstream s;
        s << type.name << (op == MPI_SUM ? " SUM" : " MAX") << " count=" << count << " density=" << density << " "
          << name_of(pattern) << (shared_send ? " shared-send" : "") << (shared_recv ? " shared-recv" : "")
          << (in_place ? " in-place" : "") << " algorithm=" << algorithm << " block=" << block << " seed=" << seed;
        return s.str();
    }
};

void check_case(const Case &c, CommCache &comms) {
    SCOPED_TRACE(c.describe());
    const int rank = world_rank(), size = world_size();
    const std::size_t elem = element_size(c.type.type);
    const std::vector<std::byte> input = rank_input(c.type.type, c.count, c.block, c.pattern, c.density, rank, size,
                                                    c.seed, c.seed * 131 + static_cast<unsigned>(rank));
    const std::size_t bytes = input.size();
    std::vector<std::byte> expected(bytes);
    ASSERT_EQ(MPI_Allreduce(input.data(), expected.data(), static_cast<int>(c.count), c.type.mpi, c.op, MPI_COMM_WORLD),
              MPI_SUCCESS);
    Buffer send(bytes, c.shared_send), recv(bytes + 64, c.shared_recv);
    std::memcpy(send.data(), input.data(), bytes);
    // Garbage everywhere the result does not overwrite, and a guard past the end.
    std::memset(recv.data(), 0x5c, bytes + 64);
    if (c.in_place) std::memcpy(recv.data(), input.data(), bytes);
    MPI_Comm comm =
        comms.get(c.algorithm + "/" + std::to_string(c.block), {{"mpix_sparse_algorithm", c.algorithm},
                                                                {"mpix_sparse_block_size", std::to_string(c.block)},
                                                                {"mpix_sparse_dense_below", "0"}});
    // Twice: the second call finds every peer's segment mapped already.
    for (int round = 0; round < 2; ++round) {
        if (round == 1) {
            std::memset(recv.data(), 0x5c, bytes);
            if (c.in_place) std::memcpy(recv.data(), input.data(), bytes);
        }
        const int rc = MPIX_Sparse_allreduce(c.in_place ? MPI_IN_PLACE : send.data(), recv.data(),
                                             static_cast<MPI_Count>(c.count), c.type.mpi, c.op, comm);
        EXPECT_EQ(rc, MPI_SUCCESS);
        const long long bad = first_difference(recv.copy(bytes), expected, elem);
        EXPECT_EQ(bad, -1) << "rank " << rank << " round " << round << " differs from MPI_Allreduce first at element "
                           << bad;
        EXPECT_EQ(recv.data()[bytes + 63], std::byte{0x5c}) << "wrote past the end of recvbuf";
    }
}

TEST(AllocMem, RandomizedMatchesMpiAllreduce) {
    std::mt19937_64 rng(2026);  // the same sequence on every rank: cases are collective
    CommCache comms;
    const auto types = sparse_types();
    const std::uint64_t counts[] = {1, 255, 257, 4099, 100003, 300000, 1 << 20};
    const double densities[] = {0.0, 0.05, 0.3, 0.6, 1.0};
    const Pattern patterns[] = {Pattern::Random, Pattern::Identical, Pattern::Disjoint, Pattern::Clustered};
    const char *algorithms[] = {"auto", "aggregator", "aggregator", "allgather"};
    const std::uint32_t block_sizes[] = {256, 64, 7};
    for (int i = 0; i < 60; ++i) {
        Case c;
        c.type = types[rng() % types.size()];
        c.op = rng() % 3 == 0 ? MPI_MAX : MPI_SUM;
        c.count = counts[rng() % std::size(counts)];
        c.density = densities[rng() % std::size(densities)];
        c.pattern = patterns[rng() % std::size(patterns)];
        const unsigned buffers = static_cast<unsigned>(rng() % 4);
        c.shared_send = (buffers & 1) != 0;
        c.shared_recv = (buffers & 2) != 0 || buffers == 0;
        c.in_place = rng() % 4 == 0;
        c.algorithm = algorithms[rng() % std::size(algorithms)];
        c.block = block_sizes[rng() % std::size(block_sizes)];
        c.seed = static_cast<unsigned>(i + 1);
        check_case(c, comms);
        if (!everywhere(!::testing::Test::HasFailure())) break;
    }
}

// Dense and half-dense 4 MiB vectors through aggregators: with both buffers shared, payloads are read
// in place (counted once per payload); with heap buffers never.
TEST(AllocMem, PayloadsAreReadInPlaceOnlyFromSharedBuffers) {
    const int size = world_size();
    if (size < 2) GTEST_SKIP() << "one rank sends nothing";
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    const std::uint64_t count = 1 << 20;
    for (double density : {1.0, 0.6}) {
        for (bool shared : {true, false}) {
            Case c{{MPI_FLOAT, ElementType::F32, "MPI_FLOAT"},
                   MPI_SUM,
                   count,
                   density,
                   Pattern::Random,
                   shared,
                   shared,
                   false,
                   "aggregator",
                   256,
                   7};
            SCOPED_TRACE(c.describe());
            const std::vector<std::byte> input =
                rank_input(ElementType::F32, count, 256, c.pattern, density, world_rank(), size, 7, 11);
            std::vector<std::byte> expected(input.size());
            MPI_Allreduce(input.data(), expected.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            Buffer send(input.size(), shared), recv(input.size(), shared);
            std::memcpy(send.data(), input.data(), input.size());
            std::memset(recv.data(), 0x5c, input.size());
            ASSERT_EQ(MPIX_Sparse_stats_reset(comm.get()), MPI_SUCCESS);
            ASSERT_EQ(MPIX_Sparse_allreduce(send.data(), recv.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                            comm.get()),
                      MPI_SUCCESS);
            EXPECT_EQ(first_difference(recv.copy(input.size()), expected, 4), -1);
            const MPIX_Sparse_stats s = stats_of(comm.get());
            EXPECT_EQ(s.last_algorithm, MPIX_SPARSE_ALGORITHM_AGGREGATOR);
            MPI_Count bytes_in_place = -1;
            ASSERT_EQ(MPIX_Sparse_stats_in_place(comm.get(), &bytes_in_place), MPI_SUCCESS);
            EXPECT_GE(bytes_in_place, 0);
            EXPECT_LE(bytes_in_place, s.bytes_sent);
            long long in_place = static_cast<long long>(bytes_in_place);
            MPI_Allreduce(MPI_IN_PLACE, &in_place, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            if (!shared) {
                EXPECT_EQ(in_place, 0) << "heap buffers are never read in place";
            } else if (shares_memory()) {
                // Every worker's contribution and every aggregator's result: at least the vector once.
                EXPECT_GE(in_place, static_cast<long long>(input.size()) / 2);
            }
        }
    }
}

// Allocating and freeing in a loop, a call on each allocation: the same descriptor numbers come back
// with new memory, which peers must tell from the freed one they mapped (by its inode).
TEST(AllocMem, AllocateAndFreeInALoop) {
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    const std::uint64_t count = 1 << 18;
    for (int i = 0; i < 40; ++i) {
        std::vector<float> input(count, static_cast<float>(i + world_rank())), expected(count);
        MPI_Allreduce(input.data(), expected.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        Buffer send(count * 4, true), recv(count * 4, true);
        std::memcpy(send.data(), input.data(), count * 4);
        ASSERT_EQ(MPIX_Sparse_allreduce(send.data(), recv.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM,
                                        comm.get()),
                  MPI_SUCCESS);
        ASSERT_EQ(std::memcmp(recv.data(), expected.data(), count * 4), 0) << "iteration " << i;
    }
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
