// What a broken or hostile peer can make a rank hold, and what it can make it do: messages for an
// operation far ahead fail the operation instead of being kept, messages for unknown contexts are
// dropped, and repeated goodbyes do not send a dedicated aggregator away early. Raw messages are
// sent through the library's own links (this executable links the library's objects).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/agreement.h"
#include "core/comm_state.h"
#include "core/element_type.h"
#include "core/library.h"
#include "core/planner.h"
#include "mpi_test_util.h"

namespace mpix::sparse::detail::testing {
namespace {

// Header-only messages from this rank to group rank `peer` of `state`. The receiver may not be
// progressing yet (a flood fills shared-memory queues), so completion is awaited later (finish).
class RawSends {
  public:
    RawSends(CommState &state, int peer, std::vector<WireHeader> headers)
        : headers_(std::move(headers)), sent_(headers_.size()) {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        for (std::size_t i = 0; i < headers_.size(); ++i)
            state.links().send(peer, headers_[i], nullptr, 0, sent_[i]);
    }
    ~RawSends() {
        Library::get().wait_until([&] {
            for (const Completion &c : sent_)
                if (!c.done()) return false;
            return true;
        });
    }

  private:
    std::vector<WireHeader> headers_;
    std::vector<Completion> sent_;
};

int call(MPI_Comm comm, std::vector<float> &out) {
    std::vector<float> in(out.size(), 0.0f);
    for (std::size_t i = 0; i < in.size(); i += 1000)
        in[i] = 1.0f;
    return MPIX_Sparse_allreduce(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_FLOAT, MPI_SUM, comm);
}

TEST(ProtocolBounds, MessagesFarAheadFailTheOperationInsteadOfPilingUp) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    std::vector<float> out(200000);
    ASSERT_EQ(call(comm.get(), out), MPI_SUCCESS);
    CommState *state = Library::get().find(comm.get());
    ASSERT_NE(state, nullptr);
    // Every rank has left the first call: the message below can only be held against the next one.
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        WireHeader h;
        h.kind = MessageKind::Contribution;
        h.context = state->context();
        h.seq = 1000;  // this communicator has made one call
        h.count = 200000;
        h.block_elems = 256;
        h.num_workers = static_cast<std::uint32_t>(size);
        RawSends raw(*state, 0, {h});
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const int rc = call(comm.get(), out);
    EXPECT_EQ(class_of(rc), rank == 0 ? MPIX_ERR_SPARSE_PROTOCOL : MPIX_ERR_SPARSE_REMOTE) << "rank " << rank;
    // Nothing of it stays behind: the next call is clean.
    EXPECT_EQ(call(comm.get(), out), MPI_SUCCESS);
    EXPECT_EQ(out[0], static_cast<float>(size));
}

// A malformed message fails the operation its header names: one that names an operation this rank
// has ended is dropped (a peer may send for the next operation while this rank ends the last), one
// that names the next operation fails that one, and nothing stays behind.
TEST(ProtocolBounds, AMalformedMessageFailsOnlyTheOperationItNames) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    std::vector<float> out(200000);
    ASSERT_EQ(call(comm.get(), out), MPI_SUCCESS);  // operation 0
    CommState *state = Library::get().find(comm.get());
    ASSERT_NE(state, nullptr);
    auto send_malformed = [&](std::uint64_t seq) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            WireHeader h;
            h.kind = MessageKind::Contribution;
            h.context = state->context();
            h.seq = seq;
            h.count = 200000;
            h.block_elems = 0;  // malformed
            h.num_workers = static_cast<std::uint32_t>(size);
            RawSends raw(*state, 0, {h});
        }
        MPI_Barrier(MPI_COMM_WORLD);
    };
    send_malformed(0);                                                 // names the operation every rank has ended
    ASSERT_EQ(call(comm.get(), out), MPI_SUCCESS) << "rank " << rank;  // operation 1
    EXPECT_EQ(out[0], static_cast<float>(size));
    send_malformed(2);  // names the next operation
    const int rc = call(comm.get(), out);
    EXPECT_EQ(class_of(rc), rank == 0 ? MPIX_ERR_SPARSE_PROTOCOL : MPIX_ERR_SPARSE_REMOTE) << "rank " << rank;
    EXPECT_EQ(call(comm.get(), out), MPI_SUCCESS) << "rank " << rank;
    EXPECT_EQ(out[0], static_cast<float>(size));
}

TEST(ProtocolBounds, AgreedBlockCountBeyondTheVectorIsRefused) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "allgather"}, {"mpix_sparse_dense_below", "0"}});
    CommState *state = Library::get().find(comm.get());
    ASSERT_NE(state, nullptr);
    const std::uint64_t count = 200000;
    std::vector<float> out(count);
    if (rank == 1) {
        // Rank 1 makes the call's agreement itself, matching every argument but claiming a block
        // count whose allgather record size (1032 bytes a block) wraps to 16 bytes.
        std::uint64_t inverse = 129;
        for (int i = 0; i < 6; ++i)
            inverse *= 2 - 129 * inverse;
        const auto claimed = static_cast<std::int64_t>(inverse & ((std::uint64_t{1} << 61) - 1));
        std::vector<SumMax> v(AgreementFields::kHeader +
                                  histogram_bins(static_cast<int>(state->group().aggregators.size())),
                              SumMax{0, 0});
        auto put = [&](std::size_t i, std::int64_t x) { v[i] = SumMax{x, x}; };
        put(AgreementFields::kCount, static_cast<std::int64_t>(count));
        put(AgreementFields::kType, static_cast<std::int64_t>(ElementType::F32));
        put(AgreementFields::kOp, static_cast<std::int64_t>(ReduceOp::Sum));
        put(AgreementFields::kBlockElems, 256);
        put(AgreementFields::kAlgorithm,
            static_cast<std::int64_t>(state->config().algorithm) * 4 + (state->tuning() ? 3 : 0));
        put(AgreementFields::kNonzero, claimed);
        MPI_Request r = MPI_REQUEST_NULL;  // non-blocking, as the others' (blocking ones would not match)
        ASSERT_EQ(Library::get().agreement().iallreduce(v, state->comm(), &r), MPI_SUCCESS);
        ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        state->skip_line();  // the call's sequence number, as the others used it
    } else {
        EXPECT_EQ(class_of(call(comm.get(), out)), MPIX_ERR_SPARSE_PROTOCOL) << "rank " << rank;
    }
    // Nothing was sized from it: the next call is clean.
    EXPECT_EQ(call(comm.get(), out), MPI_SUCCESS);
    EXPECT_EQ(out[0], static_cast<float>(size));
}

TEST(ProtocolBounds, MessagesForUnknownContextsAreDropped) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_algorithm", "aggregator"}, {"mpix_sparse_dense_below", "0"}});
    std::vector<float> out(200000);
    ASSERT_EQ(call(comm.get(), out), MPI_SUCCESS);
    std::unique_ptr<RawSends> flood;
    if (rank == 1) {
        std::vector<WireHeader> headers(2000);
        for (std::size_t i = 0; i < headers.size(); ++i) {
            headers[i].kind = MessageKind::Contribution;
            headers[i].context = 0xfffff000u + static_cast<std::uint32_t>(i % 7);
            headers[i].seq = i;
        }
        flood = std::make_unique<RawSends>(*Library::get().find(comm.get()), 0, std::move(headers));
    }
    // Rank 0 takes the flood in while it progresses these calls.
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(call(comm.get(), out), MPI_SUCCESS);
        EXPECT_EQ(out[0], static_cast<float>(size));
    }
    flood.reset();
}

TEST(ProtocolBounds, RepeatedGoodbyesCountOnce) {
    const int rank = world_rank(), size = world_size();
    if (size < 3) GTEST_SKIP() << "needs an aggregator and two workers";
    // Rank 0 aggregates; worker 0 (world rank 1) says goodbye three times while the others still
    // call. Counted without de-duplication, the aggregator would leave and the next call hang.
    SparseComm comm(MPI_COMM_WORLD, {{"mpix_sparse_aggregator_mode", "dedicated"},
                                     {"mpix_sparse_placement", "packed"},
                                     {"mpix_sparse_algorithm", "aggregator"},
                                     {"mpix_sparse_dense_below", "0"}});
    ASSERT_EQ(comm.rc(), MPI_SUCCESS);
    if (comm.get() == MPI_COMM_NULL) return;  // the aggregator: served until every worker left
    CommState *state = Library::get().find(comm.get());
    ASSERT_NE(state, nullptr);
    if (rank == 1) {
        WireHeader h;
        h.kind = MessageKind::Goodbye;
        h.context = state->context();
        h.sender = static_cast<std::uint32_t>(state->group().my_worker());
        RawSends raw(*state, state->group().aggregators[0], {h, h, h});
    }
    MPI_Barrier(comm.get());
    std::vector<float> out(200000);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(call(comm.get(), out), MPI_SUCCESS);
        EXPECT_EQ(out[0], static_cast<float>(size - 1));
    }
}

// Ranks of one machine hand each other large payloads by reference (transport/shared_segment.h):
// every rank can put a payload for every other one in its shared segment. Fails where the segment
// silently could not be set up (memfd, mmap or /proc/<pid>/fd refused), which would leave every
// payload on UCX's slower path.
TEST(SharedMemory, RanksOfOneMachineShareSegments) {
    const int rank = world_rank(), size = world_size();
    if (size < 2) GTEST_SKIP();
    const char *bytes = std::getenv("MPIX_SPARSE_SHARED_MEMORY_BYTES");
    if (bytes != nullptr && std::string(bytes) == "0") GTEST_SKIP() << "shared segments are off";
    SparseComm comm(MPI_COMM_WORLD, {});
    CommState *state = Library::get().find(comm.get());
    ASSERT_NE(state, nullptr);
    {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        for (int peer = 0; peer < size; ++peer) {
            if (peer == rank) continue;
            EXPECT_NE(state->links().shared_buffer(&peer, 1, 64), nullptr) << "peer " << peer;
        }
    }
    // What was taken is given back at the next call's barrier; the call itself is right.
    std::vector<float> out(200000);
    EXPECT_EQ(call(comm.get(), out), MPI_SUCCESS);
    EXPECT_EQ(out[0], static_cast<float>(size));
}

}  // namespace
}  // namespace mpix::sparse::detail::testing
