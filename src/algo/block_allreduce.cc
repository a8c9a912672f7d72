#include "algo/block_allreduce.h"

#include <new>
#include <optional>
#include <utility>

#include "algo/device_staging.h"
#include "algo/hierarchical_allreduce.h"
#include "algo/sparse_operation.h"
#include "algo/stream_spec.h"
#include "core/block_scan.h"
#include "core/comm_state.h"
#include "core/device_memory.h"
#include "core/element_type.h"
#include "core/library.h"
#include "core/memory_ops.h"

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

// Calls that go to the dense path without looking at the data: dense by their arguments, or by a
// dense streak (core/dense_streak.h; one call of it used up). Every rank decides alike. A hierarchy
// keeps no streak at the top: its calls reduce level by level.
bool dense_without_scan(CommState &state, std::uint64_t count, MPI_Datatype datatype, MPI_Op op) {
    return dense_by_arguments(state, count, datatype, op) ||
           (state.hierarchy() == nullptr && state.config().algorithm == AlgorithmChoice::Auto &&
            state.dense_streak().take(count, datatype, op));
}

// Device buffers go through the same stages: their non-zero blocks are found on the device and
// only those are staged to host (after the plan, and only when it is not dense); a device output
// gets the union written back at the end. The dense path stages whole buffers (the MPI need not be
// CUDA-aware).
class BlockAllreduce final : public SparseOperation {
  public:
    BlockAllreduce(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype,
                   MPI_Op op, BufferKinds kinds, bool local_failure, bool blocking)
        : SparseOperation(state), sendbuf_(sendbuf), recvbuf_(recvbuf), count_(count), datatype_(datatype), op_(op),
          type_(element_type_of(datatype)), reduce_(reduce_op_of(op)), in_place_(sendbuf == MPI_IN_PLACE),
          kinds_(kinds), local_failure_(local_failure), blocking_(blocking) {
        if (in_place_) kinds_.send = kinds_.recv;
        if (kinds_.any_device()) device_ = device_memory();  // the API made sure there is one
    }

    void activate() override;
    // rebind_block_allreduce.
    bool rebind(const void *sendbuf, void *recvbuf, std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                BufferKinds kinds, bool blocking) {
        const bool in_place = sendbuf == MPI_IN_PLACE;
        if (in_place) kinds.send = kinds.recv;
        // The element type and reduction as the handles say now: a freed derived datatype's handle may
        // name another type today, so the one this was made with is compared by what it was.
        if (!retired() || abandoned() || error() || local_failure_ || count != count_ || in_place != in_place_ ||
            blocking != blocking_ || kinds.send != kinds_.send || kinds.recv != kinds_.recv ||
            element_type_of(datatype) != type_ || reduce_op_of(op) != reduce_)
            return false;
        sendbuf_ = sendbuf;
        recvbuf_ = recvbuf;
        datatype_ = datatype;
        op_ = op;
        return true;
    }

  private:
    void start_dense() override;
    bool stage_for_dense();
    SendStaging *begin_send_staging(const BlockLayout &layout);
    void drop_send_staging();
    void dense_by_caller() override {
        blocking_allreduce(dense_in_, dense_out_, count_, datatype_, op_, state().comm());
    }
    void planned(Algorithm algorithm) override;
    bool blocking() const override { return blocking_; }
    void finish_dense() override {
        if (on_device(kinds_.recv) && count_ > 0) device_->upload(dense_out_, dense_bytes(), recvbuf_);
    }
    void finish_sparse() override {
        if (staged_sink_) staged_sink_->finish(static_cast<std::byte *>(recvbuf_));
    }
    OpError local_error() const override {
        if (device_error_) return *device_error_;
        if (out_of_memory_) return {ErrorId::OutOfMemory, "the non-zero bitmap"};
        if (local_failure_) return {ErrorId::RemoteFailure, "in the node level"};
        return {ErrorId::InjectedFailure, "before the agreement"};
    }
    const ContributionSource &source() const override { return *source_; }
    ResultSink &sink() override {
        if (staged_sink_) return *staged_sink_;
        return *sink_;
    }
    std::size_t dense_bytes() const {
        MPI_Aint lb = 0, extent = 0;
        MPI_Type_get_extent(datatype_, &lb, &extent);
        return static_cast<std::size_t>(count_) * static_cast<std::size_t>(extent);
    }
    const std::byte *input() const { return static_cast<const std::byte *>(in_place_ ? recvbuf_ : sendbuf_); }

    const void *sendbuf_;
    void *recvbuf_;
    std::uint64_t count_;
    MPI_Datatype datatype_;
    MPI_Op op_;
    std::optional<ElementType> type_;  // of datatype_ and op_ when this was made
    std::optional<ReduceOp> reduce_;
    bool in_place_;
    BufferKinds kinds_;
    DeviceMemory *device_ = nullptr;
    bool local_failure_;
    bool blocking_;
    bool out_of_memory_ = false;
    std::optional<OpError> device_error_;
    const void *dense_in_ = nullptr;  // the dense path's host input (staged from a device input)
    void *dense_out_ = nullptr;       // the dense path's host output (staging for a device output)
    std::optional<BitmapSource> source_;
    std::optional<DenseResultSink> sink_;
    std::optional<StagedResultSink> staged_sink_;
};

void BlockAllreduce::start_dense() {
    if (count_ == 0) return;
    dense_in_ = sendbuf_;
    dense_out_ = recvbuf_;
    if (device_ != nullptr && !stage_for_dense()) {
        cannot_join(error());  // the failure stage_for_dense recorded
        return;
    }
    // A blocking call's dense path is MPI's own blocking MPI_Allreduce where that is the faster one
    // (CommState::blocking_dense: on one node, without a timeout). Every rank decides alike: the call
    // is blocking on every rank, and the plan, the streak and the configuration are shared. A timeout
    // (which must then be set alike on every rank) keeps the non-blocking wait, which alone can end
    // the call with an error when a peer stalls. Operations on other communicators wait meanwhile,
    // as they do during any blocking MPI call the program makes.
    if (blocking_ && state().blocking_dense()) {
        defer_dense_to_caller();
        return;
    }
    mpi_.iallreduce(dense_in_, dense_out_, count_, datatype_, op_, state().comm());
}

// Device buffers: the dense path reduces host copies (the MPI need not be CUDA-aware). False when
// there is nothing to join the collective with.
bool BlockAllreduce::stage_for_dense() {
    DeviceStaging &staging = scratch().device;
    const std::size_t bytes = dense_bytes();
    dense_out_ = nullptr;
    std::optional<OpError> failed;
    try {
        dense_out_ = on_device(kinds_.recv) ? static_cast<void *>(staging.output.reserve(*device_, bytes)) : recvbuf_;
        if (in_place_) {
            if (on_device(kinds_.recv)) device_->download(recvbuf_, bytes, dense_out_);
        } else if (on_device(kinds_.send)) {
            std::byte *staged = staging.input.reserve(*device_, bytes);
            device_->download(sendbuf_, bytes, staged);
            dense_in_ = staged;
        }
    } catch (const Error &e) {
        failed = OpError{e.id(), e.detail()};
    } catch (const std::bad_alloc &) {
        failed = OpError{ErrorId::OutOfMemory, "staging for the dense path"};
    }
    if (failed) {
        // The other ranks are in the collective already: join it with what there is and fail after
        // (as any local failure on the dense path does).
        fail(std::move(*failed));
        if (dense_out_ == nullptr) return false;  // no staging at all: nothing to join with
        if (dense_in_ == sendbuf_ && on_device(kinds_.send)) dense_in_ = MPI_IN_PLACE;  // never hand MPI device memory
    }
    return true;
}

void BlockAllreduce::planned(Algorithm algorithm) {
    state().dense_streak().record(count_, datatype_, op_, algorithm == Algorithm::Dense && dense_streak_allowed());
    // Only a sparse plan needs the contribution's blocks on the host: the dense one stages it all.
    if (algorithm == Algorithm::Dense || !on_device(kinds_.send) || call_.nonzero == 0) return;
    try {
        if (state().config().fail_at == FailPoint::Download)
            throw Error(ErrorId::InjectedFailure, "reading the device buffer's blocks");
        device_->download_blocks(input(), call_.layout, scratch().bitmap, call_.nonzero, scratch().device.input.data());
    } catch (const Error &e) {
        fail(OpError{e.id(), e.detail()});  // the stream or the allgather still starts, and tells the peers
    }
}

// The scan's staging for this call (core/send_staging.h), or null. Only for vectors too large to
// stay cached (below that, packing reads from the cache) of whole-line blocks, when every aggregator
// reads this rank's shared memory in place; not when the allgather is forced (it reads the input).
SendStaging *BlockAllreduce::begin_send_staging(const BlockLayout &layout) {
    OperationScratch &s = scratch();
    s.send_staging.clear();
    CommState &st = state();
    if (layout.total_bytes() < kStreamingFillBytes || layout.block_bytes() % 64 != 0 ||
        st.config().algorithm == AlgorithmChoice::Allgather)
        return nullptr;
    const Group &group = st.group();
    s.send_staging_peers.clear();
    for (int a : group.aggregators)
        if (a != group.rank) s.send_staging_peers.push_back(a);
    if (s.send_staging_peers.empty()) return nullptr;
    const std::uint64_t chunk = blocks_per_message(st.config().message_bytes, layout);
    std::byte *base = st.links().shared_buffer(s.send_staging_peers.data(), s.send_staging_peers.size(),
                                               SendStaging::bytes_needed(layout, chunk));
    if (base == nullptr) return nullptr;
    try {
        const bool guess = s.last_shard_vector == layout.num_blocks();  // the last stream's own shard
        s.send_staging.begin(base, layout, chunk, guess ? s.last_shard_lo : 0, guess ? s.last_shard_hi : 0);
    } catch (const std::bad_alloc &) {
        st.links().trim_shared(base, 0);
        throw;
    }
    return &s.send_staging;
}

void BlockAllreduce::drop_send_staging() {
    OperationScratch &s = scratch();
    if (!s.send_staging.active()) return;
    state().links().trim_shared(s.send_staging.base(), 0);
    hold_shared(nullptr);
    s.send_staging.clear();
}

void BlockAllreduce::activate() {
    CommState &s = state();
    out_of_memory_ = false;  // a persistent request starts afresh
    device_error_.reset();
    dense_out_ = recvbuf_;
    const Config &config = s.config();
    // The streak is consulted (and used up) alike on every rank, whatever happened here: the ranks
    // must take the same path. A local failure then still joins the dense collective and fails after.
    if (dense_without_scan(s, count_, datatype_, op_)) {
        go_dense();
        if (local_failure_) fail(local_error());
        return;
    }
    std::optional<PhaseTimer> scanning(std::in_place, s.profile(), Phase::Scan);
    const auto type = element_type_of(datatype_);
    const auto reduce = reduce_op_of(op_);
    SparseCall call;
    call.type = *type;
    call.op = *reduce;
    call.layout = BlockLayout{count_, config.block_elems, static_cast<std::uint32_t>(element_size(*type))};
    call.device = kinds_.any_device();
    auto *output = static_cast<std::byte *>(recvbuf_);
    if (s.tuning() && !call.device && s.size() > 1) {  // what the tuner learns the call's time under
        const std::size_t bytes = call.layout.total_bytes();
        call.in_place = s.links().in_place_memory(input(), bytes) && s.links().in_place_memory(output, bytes);
    }
    static BlockBitmap no_bitmap;  // only read when the scratch could not be had (nothing is then)
    BlockBitmap *bitmap = &no_bitmap;
    const std::byte *data = input();
    const std::uint64_t *ranks = nullptr;
    SendStaging *staged = nullptr;  // the scan's copy of the blocks to send
    bool writes_zeros = false;      // the sink writes the output's zeros (else they are there)
    try {
        bitmap = &scratch().bitmap;
        bitmap->reset(call.layout.num_blocks());
        if (on_device(kinds_.send)) {
            // Found on the device; the blocks themselves come over after the plan (planned()).
            DeviceStaging &staging = scratch().device;
            call.nonzero = device_->scan(data, call.layout, *bitmap);
            rank_words(*bitmap, staging.word_ranks);
            ranks = staging.word_ranks.data();
            data = staging.input.reserve(*device_, static_cast<std::size_t>(call.nonzero) * call.layout.block_bytes());
            if (!on_device(kinds_.recv)) zero_absent_blocks(output, call.layout, *bitmap);
        } else {
            // The scan never writes the output: a host output gets its zeros from the sink, with the
            // results, so that each of its bytes is written once (in place, this rank's zero blocks
            // are zero already, and a dense plan lets MPI write it all).
            staged = begin_send_staging(call.layout);
            call.nonzero = scan_blocks(data, call.layout, *bitmap, staged);
            if (staged != nullptr) {
                state().links().trim_shared(staged->base(), staged->bytes_used());
                hold_shared(staged->base());
            }
            writes_zeros = !in_place_ && !on_device(kinds_.recv);
        }
        if (on_device(kinds_.recv)) staged_sink_.emplace(*device_, scratch().device, call.layout);
    } catch (const std::bad_alloc &) {
        out_of_memory_ = true;  // still agree, so the other ranks learn of it instead of waiting
    } catch (const Error &e) {
        device_error_ = OpError{e.id(), e.detail()};  // a CUDA failure: agree, as above
    }
    if (out_of_memory_ || device_error_) {
        call.nonzero = 0;
        bitmap->reset(0);
        staged_sink_.reset();
        if (staged != nullptr) drop_send_staging();
        staged = nullptr;
    }
    source_.emplace(data, call.layout, *bitmap, ranks, staged);
    if (!staged_sink_)
        sink_.emplace(output, call.layout,
                      writes_zeros ? DenseResultSink::Zeros::Written : DenseResultSink::Zeros::Present);
    if (local_failure_ || out_of_memory_ || device_error_ || config.fail_at == FailPoint::Scan)
        call.local = SparseCall::Local::Failure;
    scanning.reset();
    agree(call);
}

}  // namespace

bool blocking_dense_at_once(CommState &state, const void *sendbuf, void *recvbuf, std::uint64_t count,
                            MPI_Datatype datatype, MPI_Op op) {
    {
        std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
        if (!state.idle() || state.broken() || state.profile() != nullptr || !state.blocking_dense()) return false;
        // The same decision the call would make in line (BlockAllreduce::activate), made here only when
        // nothing is in line: a streak call is used up once, here or there, so every rank's streak
        // stays the same. (take() changes nothing when it says no.)
        if (!dense_without_scan(state, count, datatype, op)) return false;
        state.skip_line();
        CommStats &stats = state.stats();
        ++stats.dense_fallbacks;
        stats.last_algorithm = static_cast<int>(Algorithm::Dense);
    }
    if (count > 0) blocking_allreduce(sendbuf, recvbuf, count, datatype, op, state.comm());
    return true;
}

bool rebind_block_allreduce(Operation &operation, const void *sendbuf, void *recvbuf, std::uint64_t count,
                            MPI_Datatype datatype, MPI_Op op, BufferKinds kinds, bool blocking) {
    auto *block = dynamic_cast<BlockAllreduce *>(&operation);
    return block != nullptr && block->rebind(sendbuf, recvbuf, count, datatype, op, kinds, blocking);
}

std::unique_ptr<Operation> make_block_allreduce(CommState &state, const void *sendbuf, void *recvbuf,
                                                std::uint64_t count, MPI_Datatype datatype, MPI_Op op,
                                                BufferKinds kinds, bool local_failure, bool blocking) {
    NodeHierarchy *h = state.hierarchy();
    if (h != nullptr && !dense_by_arguments(state, count, datatype, op))
        return std::make_unique<HierarchicalAllreduce>(state, *h, sendbuf, recvbuf, count, datatype, op, kinds,
                                                       local_failure);
    return std::make_unique<BlockAllreduce>(state, sendbuf, recvbuf, count, datatype, op, kinds, local_failure,
                                            blocking);
}

}  // namespace mpix::sparse::detail
