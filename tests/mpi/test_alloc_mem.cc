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
    Buffer(std::size_t bytes, bool shared) : shared_(shared) {
        if (shared && MPIX_Sparse_alloc_mem(static_cast<MPI_Aint>(bytes), MPI_INFO_NULL, &data_) != MPI_SUCCESS) {
            ADD_FAILURE() << "MPIX_Sparse_alloc_mem of " << bytes << " bytes failed";
            shared_ = false;
        }
        if (!shared_) {
            heap_.resize(bytes);
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

// How many ranks of MPI_COMM_WORLD share memory through the library with this one, itself included:
// the ranks MPI sees on this node, or 1 where shared segments are off or a test setting splits the
// node.
int ranks_sharing_memory() {
    const char *bytes = std::getenv("MPIX_SPARSE_SHARED_MEMORY_BYTES");
    if ((bytes != nullptr && std::string(bytes) == "0") || std::getenv("MPIX_SPARSE_TEST_RANKS_PER_NODE") != nullptr)
        return 1;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int n = 0;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
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
            const auto vector = static_cast<long long>(input.size());
            const int sharing = ranks_sharing_memory();
            if (!shared) {
                EXPECT_EQ(in_place, 0) << "heap buffers are never read in place";
            } else if (sharing == size && density == 1.0) {
                // Each worker's contributions ((size - 1) / size of the vector) and each aggregator's
                // results (its shard): size vectors in all.
                EXPECT_GE(in_place, size * vector - size * 65536) << "contributions and results, in place";
            } else if (sharing == size) {
                EXPECT_GE(in_place, vector / 2);
            } else if (sharing > 1) {
                EXPECT_GT(in_place, 0) << "between the ranks of one node";
            }
        }
    }
}

// The other entry points on shared buffers give what they give on heap buffers, bit for bit: the
// element variant into a dense output (reduced into by its aggregators, one element per block),
// persistent requests started twice, and MPIX_FLOAT16 (accumulated in float, narrowed at the end).
TEST(AllocMem, OtherCallsMatchTheirHeapResults) {
    const int rank = world_rank();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    const std::uint64_t count = 1 << 19;
    std::mt19937 rng(static_cast<unsigned>(rank) + 5);
    // Element variant: about 30% of the indices, sorted, values small integers.
    std::vector<std::int64_t> idx;
    std::vector<float> val;
    for (std::uint64_t i = 0; i < count; ++i)
        if (rng() % 10 < 3) {
            idx.push_back(static_cast<std::int64_t>(i));
            val.push_back(static_cast<float>(rng() % 7 + 1));
        }
    for (bool shared : {false, true}) {
        SCOPED_TRACE(shared ? "shared" : "heap");
        Buffer out(count * 4, shared), heap(count * 4, false);
        std::memset(out.data(), 0x5c, count * 4);
        ASSERT_EQ(MPIX_Sparse_allreduce_elements(static_cast<MPI_Count>(idx.size()), idx.data(), val.data(), out.data(),
                                                 static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM, comm.get()),
                  MPI_SUCCESS);
        std::vector<float> dense(count, 0.0f), want(count);
        for (std::size_t k = 0; k < idx.size(); ++k)
            dense[static_cast<std::size_t>(idx[k])] = val[k];
        MPI_Allreduce(dense.data(), want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        EXPECT_EQ(std::memcmp(out.data(), want.data(), count * 4), 0) << "element variant";
    }
    // Persistent requests and 16-bit floats: the heap result is the reference.
    // binary16 values 1, 2, 3, 0.5 and -1 in 60% of the blocks.
    const std::uint16_t halves[] = {0x3c00, 0x4000, 0x4200, 0x3800, 0xbc00};
    std::vector<std::uint16_t> h(count, 0);
    for (std::uint64_t b = 0; b < count / 256; ++b)
        if (rng() % 10 < 6)
            for (std::uint64_t i = 0; i < 256; ++i)
                h[b * 256 + i] = halves[rng() % 5];
    std::vector<std::byte> input(count * 2);
    std::memcpy(input.data(), h.data(), input.size());
    std::vector<std::vector<std::byte>> results;
    for (bool shared : {false, true}) {
        Buffer send(input.size(), shared), recv(input.size(), shared);
        std::memcpy(send.data(), input.data(), input.size());
        MPIX_Sparse_request request = MPIX_SPARSE_REQUEST_NULL;
        ASSERT_EQ(MPIX_Sparse_allreduce_init(send.data(), recv.data(), static_cast<MPI_Count>(count), MPIX_FLOAT16,
                                             MPI_SUM, comm.get(), MPI_INFO_NULL, &request),
                  MPI_SUCCESS);
        for (int start = 0; start < 2; ++start) {
            std::memset(recv.data(), 0x5c, input.size());
            ASSERT_EQ(MPIX_Sparse_start(&request), MPI_SUCCESS);
            ASSERT_EQ(MPIX_Sparse_wait(&request), MPI_SUCCESS);
        }
        EXPECT_EQ(MPIX_Sparse_request_free(&request), MPI_SUCCESS);
        results.push_back(recv.copy(input.size()));
    }
    EXPECT_EQ(first_difference(results[1], results[0], 2), -1) << "MPIX_FLOAT16, persistent, shared vs heap";
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

// Gradient buckets: slices of one allocation (inputs) and of another (outputs), at float offsets that
// are not 8-byte aligned for some, each reduced by its own non-blocking call, all in flight at once
// on one communicator and completed in reverse order, twice. Each bucket equals MPI_Allreduce of it.
TEST(AllocMem, ConcurrentRequestsOnSlicesOfOneAllocation) {
    const int rank = world_rank(), size = world_size();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    struct Bucket {
        std::uint64_t offset, count;  // floats
        double density;
    };
    const Bucket buckets[] = {{0, 300000, 1.0}, {300001, 262144, 0.01}, {562145, 99999, 0.6}, {662144, 400000, 0.3}};
    const std::uint64_t total = 1062144;
    Buffer send(total * 4, true), recv(total * 4, true);
    for (int round = 0; round < 2; ++round) {
        std::vector<std::vector<std::byte>> expected;
        std::memset(send.data(), 0, total * 4);
        std::memset(recv.data(), 0x5c, total * 4);
        for (std::size_t b = 0; b < std::size(buckets); ++b) {
            const Bucket &k = buckets[b];
            const auto seed = static_cast<unsigned>(round * 10 + static_cast<int>(b) + 1);
            const std::vector<std::byte> input = rank_input(ElementType::F32, k.count, 256, Pattern::Random, k.density,
                                                            rank, size, seed, seed * 131 + static_cast<unsigned>(rank));
            std::memcpy(send.data() + k.offset * 4, input.data(), input.size());
            expected.emplace_back(input.size());
            MPI_Allreduce(input.data(), expected.back().data(), static_cast<int>(k.count), MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD);
        }
        MPIX_Sparse_request requests[std::size(buckets)];
        for (std::size_t b = 0; b < std::size(buckets); ++b)
            ASSERT_EQ(MPIX_Sparse_iallreduce(send.data() + buckets[b].offset * 4, recv.data() + buckets[b].offset * 4,
                                             static_cast<MPI_Count>(buckets[b].count), MPI_FLOAT, MPI_SUM, comm.get(),
                                             &requests[b]),
                      MPI_SUCCESS);
        for (std::size_t b = std::size(buckets); b-- > 0;)
            ASSERT_EQ(MPIX_Sparse_wait(&requests[b]), MPI_SUCCESS);
        for (std::size_t b = 0; b < std::size(buckets); ++b) {
            const std::byte *got = recv.data() + buckets[b].offset * 4;
            EXPECT_EQ(first_difference(std::vector<std::byte>(got, got + buckets[b].count * 4), expected[b], 4), -1)
                << "round " << round << " bucket " << b;
        }
        EXPECT_EQ(recv.data()[300000 * 4], std::byte{0x5c}) << "the float between buckets 0 and 1 was written";
    }
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
