// Device buffers through the whole library (GPU issue): the same calls on device and on host memory
// give bitwise identical results, with every algorithm, in place or not, blocking, non-blocking and
// persistent, with ranks mixing host and device buffers, and for the element variant. Runs on the
// CUDA backend on a GPU machine (skipped, exit 77, without one) and on the emulated device
// (MPIX_SPARSE_TEST_DEVICE=emulated) everywhere, which covers every path above the kernels.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "core/device_memory.h"
#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

DeviceMemory &device() {
    return *device_memory();
}

// A device allocation of `bytes` plus a guard region that must stay untouched.
class DeviceBuffer {
  public:
    static constexpr std::size_t kGuard = 64;
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        data_ = static_cast<std::byte *>(device().allocate_device(bytes + kGuard));
        const std::vector<std::byte> guard(kGuard, std::byte{0xa5});
        device().upload(guard.data(), kGuard, data_ + bytes);
    }
    DeviceBuffer(std::size_t bytes, const std::vector<std::byte> &contents) : DeviceBuffer(bytes) {
        if (bytes > 0) device().upload(contents.data(), bytes, data_);
    }
    ~DeviceBuffer() { device().free_device(data_); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;

    std::byte *get() const { return data_; }
    std::vector<std::byte> contents() const {
        std::vector<std::byte> host(bytes_);
        if (bytes_ > 0) device().download(data_, bytes_, host.data());
        return host;
    }
    bool guard_intact() const {
        std::vector<std::byte> guard(kGuard);
        device().download(data_ + bytes_, kGuard, guard.data());
        for (std::byte b : guard)
            if (b != std::byte{0xa5}) return false;
        return true;
    }

  private:
    std::size_t bytes_;
    std::byte *data_ = nullptr;
};

// Where a rank's buffers live in a case.
enum class Placement { Device, HostToDevice, DeviceToHost, MixedRanks };
const char *name_of(Placement p) {
    switch (p) {
    case Placement::Device: return "device";
    case Placement::HostToDevice: return "host->device";
    case Placement::DeviceToHost: return "device->host";
    default: return "mixed ranks";
    }
}

// The communicator of an (algorithm, block size), from the cache; "hierarchical" forces the node
// level and the node broadcast on one node.
MPI_Comm comm_for(CommCache &comms, const std::string &algorithm, std::uint32_t block) {
    CommCache::Keys keys{{"mpix_sparse_block_size", std::to_string(block)}, {"mpix_sparse_dense_below", "0"}};
    if (algorithm == "hierarchical")
        keys.push_back({"mpix_sparse_hierarchical", "on"});
    else
        keys.push_back({"mpix_sparse_algorithm", algorithm});
    return comms.get(algorithm + "/" + std::to_string(block), keys);
}

struct Case {
    TypeCase type;
    MPI_Op op;
    const char *op_name;
    std::uint64_t count;
    double density;
    Pattern pattern;
    bool in_place;
    std::string algorithm;
    std::uint32_t block;
    Placement placement;
    unsigned seed;

    std::string describe() const {
        std::ostringstream s;
        s << type.name << " " << op_name << " count=" << count << " density=" << density << " " << name_of(pattern)
          << (in_place ? " in-place" : "") << " algorithm=" << algorithm << " block=" << block << " "
          << name_of(placement) << " seed=" << seed;
        return s.str();
    }
};

// Runs the case on host buffers, then on the case's placement, and compares both with MPI_Allreduce.
void check_case(const Case &c, CommCache &comms) {
    SCOPED_TRACE(c.describe());
    const int rank = world_rank();
    const std::size_t elem = element_size(c.type.type);
    const std::size_t bytes = c.count * elem;
    const std::uint64_t blocks = (c.count + c.block - 1) / c.block;
    const auto on = block_pattern(c.pattern, blocks, c.density, rank, world_size(), c.seed);
    const std::vector<std::byte> input = make_vector(c.type.type, c.count, c.block, on, c.seed * 31 + rank);
    std::vector<std::byte> expected(bytes);
    ASSERT_EQ(MPI_Allreduce(input.data(), expected.data(), static_cast<int>(c.count), c.type.mpi, c.op, MPI_COMM_WORLD),
              MPI_SUCCESS);
    MPI_Comm comm = comm_for(comms, c.algorithm, c.block);
    const auto n = static_cast<MPI_Count>(c.count);

    std::vector<std::byte> host_out(bytes, std::byte{0x5c});
    if (c.in_place) host_out = input;
    ASSERT_EQ(
        MPIX_Sparse_allreduce(c.in_place ? MPI_IN_PLACE : input.data(), host_out.data(), n, c.type.mpi, c.op, comm),
        MPI_SUCCESS);
    const int host_algorithm = stats_of(comm).last_algorithm;

    const bool mixed_host = c.placement == Placement::MixedRanks && rank % 2 == 1;
    const bool send_on_device = !mixed_host && c.placement != Placement::HostToDevice;
    const bool recv_on_device = !mixed_host && c.placement != Placement::DeviceToHost;
    DeviceBuffer dev_in(bytes, input), dev_out(bytes, std::vector<std::byte>(bytes, std::byte{0x5c}));
    std::vector<std::byte> plain_out(bytes, std::byte{0x5c});
    const void *send = send_on_device ? static_cast<const void *>(dev_in.get()) : input.data();
    void *recv = recv_on_device ? static_cast<void *>(dev_out.get()) : plain_out.data();
    if (c.in_place) {
        // In place: the buffer is the input, in the receive buffer's memory.
        recv = recv_on_device ? static_cast<void *>(dev_in.get()) : static_cast<void *>(plain_out.data());
        if (!recv_on_device) plain_out = input;
        send = MPI_IN_PLACE;
    }
    ASSERT_EQ(MPIX_Sparse_allreduce(send, recv, n, c.type.mpi, c.op, comm), MPI_SUCCESS);
    std::vector<std::byte> got;
    if (!recv_on_device)
        got = plain_out;
    else
        got = c.in_place ? dev_in.contents() : dev_out.contents();
    EXPECT_EQ(first_difference(got, host_out, elem), -1) << "rank " << rank << ": device result differs from host";
    EXPECT_EQ(first_difference(got, expected, elem), -1) << "rank " << rank << ": differs from MPI_Allreduce";
    EXPECT_TRUE(dev_in.guard_intact() && dev_out.guard_intact()) << "wrote past the end of a device buffer";
    // The memory kind is agreed, so every rank took one path; the device one may plan differently
    // only by its staging cost (never for forced algorithms).
    if (c.algorithm != "auto") {
        EXPECT_EQ(stats_of(comm).last_algorithm, host_algorithm);
    }
}

TEST(DeviceBuffers, MatchTheHostPathBitwise) {
    std::mt19937_64 rng(2026);  // the same on every rank: cases are collective
    CommCache comms;
    const TypeCase types[] = {{MPI_FLOAT, ElementType::F32, "MPI_FLOAT"},
                              {MPI_DOUBLE, ElementType::F64, "MPI_DOUBLE"},
                              {MPI_INT, ElementType::I32, "MPI_INT"},
                              {MPI_INT64_T, ElementType::I64, "MPI_INT64_T"}};
    const std::uint64_t counts[] = {0, 1, 257, 4099, 65536, 100003};
    const double densities[] = {0.0, 0.01, 0.3, 1.0};
    const Pattern patterns[] = {Pattern::Random, Pattern::Identical, Pattern::Disjoint, Pattern::Clustered};
    const char *algorithms[] = {"auto", "aggregator", "allgather", "dense", "hierarchical"};
    const std::uint32_t block_sizes[] = {256, 7, 1};
    const Placement placements[] = {Placement::Device, Placement::HostToDevice, Placement::DeviceToHost,
                                    Placement::MixedRanks};
    for (int i = 0; i < 120; ++i) {
        Case c;
        c.type = types[rng() % std::size(types)];
        const bool sum = rng() % 3 != 0;
        c.op = sum ? MPI_SUM : MPI_MAX;
        c.op_name = sum ? "SUM" : "MAX";
        c.count = counts[rng() % std::size(counts)];
        c.density = densities[rng() % std::size(densities)];
        c.pattern = patterns[rng() % std::size(patterns)];
        c.in_place = rng() % 3 == 0;
        c.algorithm = algorithms[rng() % std::size(algorithms)];
        c.block = block_sizes[rng() % std::size(block_sizes)];
        c.placement = placements[rng() % std::size(placements)];
        if (c.in_place && (c.placement == Placement::HostToDevice || c.placement == Placement::DeviceToHost))
            c.placement = Placement::Device;
        c.seed = static_cast<unsigned>(i + 1);
        check_case(c, comms);
        if (!everywhere(!::testing::Test::HasFailure())) break;
    }
}

TEST(DeviceBuffers, NonBlockingAndPersistentCalls) {
    const std::uint64_t count = 50000;
    const auto on = block_pattern(Pattern::Random, (count + 255) / 256, 0.05, world_rank(), world_size(), 9);
    const std::vector<std::byte> input = make_vector(ElementType::F32, count, 256, on, 100 + world_rank());
    std::vector<std::byte> expected(input.size());
    MPI_Allreduce(input.data(), expected.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_dense_below", "0"}});
    DeviceBuffer in(input.size(), input), out(input.size());
    MPIX_Sparse_request r = MPIX_SPARSE_REQUEST_NULL;
    ASSERT_EQ(MPIX_Sparse_iallreduce(in.get(), out.get(), count, MPI_FLOAT, MPI_SUM, comm.get(), &r), MPI_SUCCESS);
    ASSERT_EQ(MPIX_Sparse_wait(&r), MPI_SUCCESS);
    EXPECT_EQ(out.contents(), expected);
    ASSERT_EQ(MPIX_Sparse_allreduce_init(in.get(), out.get(), count, MPI_FLOAT, MPI_SUM, comm.get(), MPI_INFO_NULL, &r),
              MPI_SUCCESS);
    for (int round = 0; round < 3; ++round) {
        const std::vector<std::byte> dirty(input.size(), std::byte{0x11});
        device().upload(dirty.data(), dirty.size(), out.get());
        ASSERT_EQ(MPIX_Sparse_start(&r), MPI_SUCCESS);
        ASSERT_EQ(MPIX_Sparse_wait(&r), MPI_SUCCESS);
        EXPECT_EQ(out.contents(), expected) << "round " << round;
    }
    EXPECT_EQ(MPIX_Sparse_request_free(&r), MPI_SUCCESS);
}

// Only non-zero data crosses the network, as on the host: the same bytes as the host path.
TEST(DeviceBuffers, MoveTheSameBytesAsTheHostPath) {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
    const std::uint64_t count = 1 << 20;
    const auto on = block_pattern(Pattern::Random, count / 256, 0.01, world_rank(), world_size(), 5);
    const std::vector<std::byte> input = make_vector(ElementType::F32, count, 256, on, 7 + world_rank());
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});
    std::vector<std::byte> host_out(input.size());
    MPIX_Sparse_stats_reset(comm.get());
    ASSERT_EQ(MPIX_Sparse_allreduce(input.data(), host_out.data(), count, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
    const MPIX_Sparse_stats host = stats_of(comm.get());
    DeviceBuffer in(input.size(), input), out(input.size());
    MPIX_Sparse_stats_reset(comm.get());
    ASSERT_EQ(MPIX_Sparse_allreduce(in.get(), out.get(), count, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
    const MPIX_Sparse_stats dev = stats_of(comm.get());
    EXPECT_EQ(dev.bytes_sent, host.bytes_sent);
    EXPECT_EQ(dev.bytes_received, host.bytes_received);
    EXPECT_LT(dev.bytes_sent, static_cast<std::int64_t>(input.size()) / 10);
    EXPECT_EQ(out.contents(), host_out);
}

TEST(DeviceBuffers, ElementVariant) {
    const std::int64_t count = 200000;
    std::mt19937_64 rng(static_cast<unsigned>(world_rank()) + 3);
    std::vector<std::int64_t> indices;
    std::vector<float> values;
    for (int i = 0; i < 3000; ++i) {
        indices.push_back(static_cast<std::int64_t>(rng() % count));  // duplicates too
        values.push_back(static_cast<float>(rng() % 100) + 1);
    }
    const auto nnz = static_cast<MPI_Count>(indices.size());
    std::vector<float> host_out(count);
    SparseComm comm(MPI_COMM_WORLD, {});
    ASSERT_EQ(MPIX_Sparse_allreduce_elements(nnz, indices.data(), values.data(), host_out.data(), count, MPI_FLOAT,
                                             MPI_SUM, comm.get()),
              MPI_SUCCESS);
    std::vector<std::byte> idx_bytes(indices.size() * 8), val_bytes(values.size() * 4);
    std::memcpy(idx_bytes.data(), indices.data(), idx_bytes.size());
    std::memcpy(val_bytes.data(), values.data(), val_bytes.size());
    DeviceBuffer d_idx(idx_bytes.size(), idx_bytes), d_val(val_bytes.size(), val_bytes), d_out(count * 4);
    ASSERT_EQ(MPIX_Sparse_allreduce_elements(nnz, reinterpret_cast<const std::int64_t *>(d_idx.get()), d_val.get(),
                                             d_out.get(), count, MPI_FLOAT, MPI_SUM, comm.get()),
              MPI_SUCCESS);
    const std::vector<std::byte> got = d_out.contents();
    EXPECT_EQ(std::memcmp(got.data(), host_out.data(), got.size()), 0);
    EXPECT_TRUE(d_out.guard_intact());
    // Device pairs, sparse (host) result.
    MPIX_Sparse_vector v = nullptr;
    ASSERT_EQ(MPIX_Sparse_allreduce_elements_sparse(nnz, reinterpret_cast<const std::int64_t *>(d_idx.get()),
                                                    d_val.get(), count, MPI_FLOAT, MPI_SUM, comm.get(), &v),
              MPI_SUCCESS);
    MPI_Count union_nnz = 0;
    const std::int64_t *ui = nullptr;
    const void *uv = nullptr;
    ASSERT_EQ(MPIX_Sparse_vector_get(v, &union_nnz, &ui, &uv), MPI_SUCCESS);
    for (MPI_Count i = 0; i < union_nnz; ++i)
        ASSERT_EQ(static_cast<const float *>(uv)[i], host_out[static_cast<std::size_t>(ui[i])]);
    MPIX_Sparse_vector_free(&v);
}

// A rank whose device blocks cannot be read after the agreement still joins the algorithm's
// collective stage, and its peers fail too (RemoteFailure) instead of reducing what its staging
// held; no rank's output is written, and the next call works.
TEST(DeviceBuffers, AFailedDownloadFailsEveryRank) {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
    const std::int64_t count = 1 << 16;
    std::vector<std::byte> input(4 * count, std::byte{0});
    const float one = 1.0f;
    std::memcpy(input.data() + 4 * 300, &one, 4);
    const std::vector<std::byte> untouched(4 * count, std::byte{0x7f});
    for (const char *algorithm : {"allgather", "aggregator"}) {
        SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", algorithm},
                                         {"mpix_sparse_dense_below", "0"},
                                         {"mpix_sparse_test_fail", world_rank() == 0 ? "download" : "none"}});
        ASSERT_EQ(comm.rc(), MPI_SUCCESS);
        DeviceBuffer in(input.size(), input), out(untouched.size(), untouched);
        const int rc = MPIX_Sparse_allreduce(in.get(), out.get(), count, MPI_FLOAT, MPI_SUM, comm.get());
        int cls = 0;
        MPI_Error_class(rc, &cls);
        EXPECT_EQ(cls, world_rank() == 0 ? MPIX_ERR_SPARSE_INTERN : MPIX_ERR_SPARSE_REMOTE) << algorithm;
        EXPECT_EQ(out.contents(), untouched) << algorithm << ": no result written";
        EXPECT_TRUE(out.guard_intact());
    }
    SparseComm good(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "allgather"}, {"mpix_sparse_dense_below", "0"}});
    DeviceBuffer in(input.size(), input), out(untouched.size(), untouched);
    ASSERT_EQ(MPIX_Sparse_allreduce(in.get(), out.get(), count, MPI_FLOAT, MPI_SUM, good.get()), MPI_SUCCESS);
    const std::vector<std::byte> result = out.contents();
    float got = 0.0f;
    std::memcpy(&got, result.data() + 4 * 300, 4);
    EXPECT_EQ(got, static_cast<float>(world_size()));
}

TEST(DeviceBuffers, BadArgumentsGiveErrorsAndTheNextCallWorks) {
    SparseComm comm(MPI_COMM_WORLD, {});
    const std::int64_t count = 1000;
    DeviceBuffer d_val(4 * 10), d_out(4 * count);
    std::vector<std::int64_t> indices(10, 1);
    // Host indices with device values: an argument error on every rank that passes them (all do).
    int rc = MPIX_Sparse_allreduce_elements(10, indices.data(), d_val.get(), d_out.get(), count, MPI_FLOAT, MPI_SUM,
                                            comm.get());
    int cls = 0;
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_ARG);
    // A device buffer with a datatype that is not contiguous from offset 0.
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_FLOAT, &strided);
    MPI_Type_commit(&strided);
    rc = MPIX_Sparse_allreduce(d_out.get(), d_out.get() + 400, 10, strided, MPI_SUM, comm.get());
    MPI_Error_class(rc, &cls);
    EXPECT_EQ(cls, MPIX_ERR_SPARSE_ARG);
    MPI_Type_free(&strided);
    EXPECT_TRUE(d_out.guard_intact());
    // The next call works.
    const std::vector<std::byte> ones(4 * count, std::byte{0});
    DeviceBuffer in(ones.size(), ones);
    EXPECT_EQ(MPIX_Sparse_allreduce(in.get(), d_out.get(), count, MPI_FLOAT, MPI_SUM, comm.get()), MPI_SUCCESS);
    EXPECT_EQ(d_out.contents(), ones);
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
