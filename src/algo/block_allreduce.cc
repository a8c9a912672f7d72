#include "algo/block_allreduce.h"

#include <new>
#include <optional>
#include <utility>

#include "algo/hierarchical_allreduce.h"
#include "algo/sparse_operation.h"
#include "core/block_scan.h"
#include "core/comm_state.h"
#include "core/element_type.h"

namespace mpix::sparse::detail {
namespace {

// Calls that go to the dense path on the arguments and configuration alone, which every rank shares,
// so all ranks agree without communicating: one rank, types and ops outside the sparse path, count 0,
// small messages, forced dense.
bool dense_by_arguments(const CommState &state, std::uint64_t count, MPI_Datatype datatype, MPI_Op op) {
    const auto type = element_type_of(datatype);
    const auto reduce = reduce_op_of(op);
    const Config &config = state.config();
    return !(type && reduce && is_sparse_capable(*type, *reduce)) || count == 0 || state.size() == 1 ||
           config.algorithm == AlgorithmChoice::Dense || count * element_size(*type) < config.dense_below_bytes;
}

class BlockAllreduce final : public SparseOperation {
  public:
    BlockAllreduce(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                   MPI_Op op, bool local_failure)
        : SparseOperation(state), sendbuf_(sendbuf), recvbuf_(recvbuf), count_(count), datatype_(datatype), op_(op),
          local_failure_(local_failure) {}

    void activate() override;

  private:
    void start_dense() override {
        if (count_ > 0) mpi_.iallreduce(sendbuf_, recvbuf_, count_, datatype_, op_, state().comm());
    }
    void planned(Algorithm algorithm) override {
        state().dense_streak().record(count_, datatype_, op_, algorithm == Algorithm::Dense);
    }
    OpError local_error() const override {
        if (out_of_memory_) return {ErrorId::OutOfMemory, "the non-zero bitmap"};
        if (local_failure_) return {ErrorId::RemoteFailure, "in the node level"};
        return {ErrorId::InjectedFailure, "before the agreement"};
    }
    const ContributionSource &source() const override { return *source_; }
    ResultSink &sink() override { return *sink_; }

    const void *sendbuf_;
    void *recvbuf_;
    std::uint64_t count_;
    MPI_Datatype datatype_;
    MPI_Op op_;
    bool local_failure_;
    bool out_of_memory_ = false;
    std::optional<BitmapSource> source_;
    std::optional<DenseResultSink> sink_;
};

void BlockAllreduce::activate() {
    CommState &s = state();
    out_of_memory_ = false;  // a persistent request starts afresh
    const Config &config = s.config();
    // The streak is consulted (and used up) alike on every rank, whatever happened here: the ranks
    // must take the same path. A local failure then still joins the dense collective and fails after.
    const bool static_dense = dense_by_arguments(s, count_, datatype_, op_);
    const bool streak =
        !static_dense && config.algorithm == AlgorithmChoice::Auto && s.dense_streak().take(count_, datatype_, op_);
    if (static_dense || streak) {
        go_dense();
        if (local_failure_) fail(local_error());
        return;
    }
    const auto type = element_type_of(datatype_);
    const auto reduce = reduce_op_of(op_);
    SparseCall call;
    call.type = *type;
    call.op = *reduce;
    call.layout = BlockLayout{count_, config.block_elems, static_cast<std::uint32_t>(element_size(*type))};
    const bool in_place = sendbuf_ == MPI_IN_PLACE;
    const auto *input = static_cast<const std::byte *>(in_place ? recvbuf_ : sendbuf_);
    auto *output = static_cast<std::byte *>(recvbuf_);
    static BlockBitmap no_bitmap;  // only read when the scratch could not be had (nothing is then)
    BlockBitmap *bitmap = &no_bitmap;
    try {
        bitmap = &scratch().bitmap;
        bitmap->reset(call.layout.num_blocks());
    } catch (const std::bad_alloc &) {
        out_of_memory_ = true;  // still agree, so the other ranks learn of it instead of waiting
    }
    if (!out_of_memory_) {
        // One pass: find the non-zero blocks and write the zeros of the output where this rank has
        // none (in place, those bytes are zero already).
        call.nonzero = scan_blocks(input, call.layout, *bitmap, in_place ? nullptr : output);
    }
    source_.emplace(input, call.layout, *bitmap);
    sink_.emplace(output, call.layout);
    if (local_failure_ || out_of_memory_ || config.fail_at == FailPoint::Scan) call.local = SparseCall::Local::Failure;
    agree(call);
}

}  // namespace

std::unique_ptr<Operation> make_block_allreduce(CommState &state, const void *sendbuf, void *recvbuf,
                                                std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                                                bool local_failure) {
    NodeHierarchy *h = state.hierarchy();
    if (h != nullptr && !dense_by_arguments(state, count, datatype, op))
        return std::make_unique<HierarchicalAllreduce>(state, *h, sendbuf, recvbuf, count, datatype, op, local_failure);
    return std::make_unique<BlockAllreduce>(state, sendbuf, recvbuf, count, datatype, op, local_failure);
}

}  // namespace mpix::sparse::detail
