// Bytes that really cross the wire, counted by the kernel: run under UCX_TLS=tcp (and without the
// shared segment, which would carry the payloads instead), the library's UCX
// traffic goes over loopback, where /proc/net/dev counts it (MPI's own traffic uses shared memory).
// At 1% block density a rank must put under 5% of the buffer on the wire per call.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "mpi_test_util.h"
#include "test_data.h"

namespace mpix::sparse::detail::testing {
namespace {

// Bytes transmitted on the loopback interface so far.
long long loopback_tx_bytes() {
    std::ifstream dev("/proc/net/dev");
    std::string line;
    while (std::getline(dev, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        name.erase(0, name.find_first_not_of(' '));
        if (name != "lo") continue;
        std::istringstream fields(line.substr(colon + 1));
        long long v[9] = {};
        for (long long &x : v)
            fields >> x;
        return v[8];  // rx: bytes packets errs drop fifo frame compressed multicast; then tx bytes
    }
    return -1;
}

TEST(WireBytes, OnePercentDensityPutsUnderFivePercentOnTheWire) {
    // The library's UCX reads MPIX_SPARSE_UCX_TLS first (tests set that, so MPICH's own UCX keeps
    // its shared memory), then UCX_TLS.
    const char *tls = std::getenv("MPIX_SPARSE_UCX_TLS");
    if (tls == nullptr) tls = std::getenv("UCX_TLS");
    if (tls == nullptr || std::string(tls) != "tcp") GTEST_SKIP() << "needs MPIX_SPARSE_UCX_TLS=tcp";
    const char *shared = std::getenv("MPIX_SPARSE_SHARED_MEMORY_BYTES");
    if (shared == nullptr || std::string(shared) != "0")
        GTEST_SKIP() << "needs MPIX_SPARSE_SHARED_MEMORY_BYTES=0 (payloads by reference never reach the wire)";
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    const std::size_t count = std::size_t{1} << 22;  // 16 MiB of floats
    const auto on = block_pattern(Pattern::Random, count / 256, 0.01, rank, size, 3);
    const auto bytes = make_vector(ElementType::F32, count, 256, on, 100 + static_cast<unsigned>(rank));
    std::vector<float> in(count), out(count), want(count);
    std::memcpy(in.data(), bytes.data(), bytes.size());
    MPI_Allreduce(in.data(), want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    // The aggregator algorithm streams over UCX (the allgather algorithm would use MPI, whose shared
    // memory never touches the loopback interface).
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}});

    // One call first: connection setup is not per-call traffic.
    ASSERT_EQ(
        MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM, comm.get()),
        MPI_SUCCESS);
    MPIX_Sparse_stats_reset(comm.get());
    const int calls = 10;
    MPI_Barrier(MPI_COMM_WORLD);
    const long long before = loopback_tx_bytes();
    for (int i = 0; i < calls; ++i)
        ASSERT_EQ(
            MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(count), MPI_FLOAT, MPI_SUM, comm.get()),
            MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    const long long after = loopback_tx_bytes();
    EXPECT_EQ(out, want);
    long long library_bytes = stats_of(comm.get()).bytes_sent;
    MPI_Allreduce(MPI_IN_PLACE, &library_bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        ASSERT_GE(before, 0) << "no loopback interface in /proc/net/dev";
        const double wire = static_cast<double>(after - before);
        const double per_rank_call = wire / size / calls;
        const double buffer = static_cast<double>(count * sizeof(float));
        std::printf("# loopback bytes per rank and call: %.0f = %.2f%% of the %.0f-byte buffer (library counted "
                    "%.0f)\n",
                    per_rank_call, 100.0 * per_rank_call / buffer, buffer,
                    static_cast<double>(library_bytes) / size / calls);
        EXPECT_LT(per_rank_call, 0.05 * buffer);
        // The measurement must see the library's traffic at all, or the bound above proves nothing.
        EXPECT_GT(wire, 0.9 * static_cast<double>(library_bytes)) << "traffic did not cross loopback";
    }
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
