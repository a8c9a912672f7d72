#include "algo/sparse_operation.h"

#include <climits>
#include <cstdio>
#include <new>
#include <utility>

#include "algo/allgather_allreduce.h"
#include "core/comm_state.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/library.h"
#include "core/memory_ops.h"

namespace mpix::sparse::detail {
namespace {

bool all_equal(const SumMax &v, int ranks) {
    std::int64_t all = 0;  // values are remote: the product may overflow
    return !__builtin_mul_overflow(v.max, ranks, &all) && v.sum == all;
}

// Codes outside the enums mark a type or op the sparse path cannot serve: ranks must agree on that
// too, or some would stream while others reduce densely.
constexpr std::int64_t kNotSparse = 99;
// The agreement's error field: the largest over ranks says what happened somewhere.
constexpr std::int64_t kArgumentError = 1, kFailure = 2;

}  // namespace

SparseOperation::SparseOperation(CommState &state) : state_(state) {
    // Messages that beat this rank's agreement are bounded by the peers' credits.
    held_.reserve(static_cast<std::size_t>(4 * (state.config().window + 1)) * static_cast<std::size_t>(state.size()));
}

OperationScratch &SparseOperation::scratch() {
    if (!scratch_) scratch_ = borrow_scratch(state_);
    return *scratch_;
}

void SparseOperation::reset() {
    stage_ = Stage::Idle;
    caller_ran_ = false;
    caller_error_.reset();
    tuned_ = false;
    dense_streak_allowed_ = true;
    error_ = OpError{};
    algorithm_ = Algorithm::Dense;
    counters_ = OpCounters{};
}

SparseOperation::~SparseOperation() {
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    stream_.reset();  // sends the transport still holds move to the scratch's drain list
    release_held();
    if (scratch_) state_.give_back(std::move(scratch_));
}

// Messages kept for a stream that will not start, and the allgather buffers, go back.
void SparseOperation::release_held() {
    Transport *links = state_.size() > 1 ? &state_.links() : nullptr;
    for (InboundMessage &m : held_)
        if (links != nullptr) links->release(m);
    held_.clear();
    if (scratch_) {
        BufferPool &pool = scratch_->resources.buffers;
        pool.release(std::move(gathered_));
    }
}

void SparseOperation::agree(const SparseCall &call) {
    call_ = call;
    const Group &group = state_.group();
    const int aggregators = static_cast<int>(group.aggregators.size());
    const std::size_t bins = histogram_bins(aggregators);
    const std::uint64_t blocks = call.layout.num_blocks();
    const std::uint64_t width = bin_width(blocks, bins);
    const bool local = call.local != SparseCall::Local::None;

    agreement_.assign(AgreementFields::kHeader + bins, SumMax{0, 0});
    auto put = [&](std::size_t i, std::int64_t x) { agreement_[i] = SumMax{x, x}; };
    put(AgreementFields::kCount, static_cast<std::int64_t>(call.layout.count));
    put(AgreementFields::kType, call.sparse_capable ? static_cast<std::int64_t>(call.type) : kNotSparse);
    put(AgreementFields::kOp, call.sparse_capable ? static_cast<std::int64_t>(call.op) : kNotSparse);
    put(AgreementFields::kBlockElems, call.layout.block_elems);
    put(AgreementFields::kError, call.local == SparseCall::Local::Failure    ? kFailure
                                 : call.local == SparseCall::Local::Argument ? kArgumentError
                                                                             : 0);
    // Tuning must be alike on every rank too (it changes the plan), and with it whether the call is
    // blocking (only blocking calls explore; MPI makes mixing them erroneous, tuning would hang).
    const std::int64_t tuning = state_.tuning() ? (blocking() ? 3 : 2) : 0;
    put(AgreementFields::kAlgorithm, static_cast<std::int64_t>(state_.config().algorithm) * 4 + tuning);
    put(AgreementFields::kNonzero, local ? 0 : static_cast<std::int64_t>(call.nonzero));
    put(AgreementFields::kDevice, call.device ? 1 : 0);
    put(AgreementFields::kInPlace, call.in_place ? 1 : 0);
    // Element calls with a dense output on some ranks and a sparse one on others would plan
    // differently (only a sparse output rules out the dense path): a mismatch like any other.
    put(AgreementFields::kOutput, !call.allow_dense ? 2 : call.output_to_zero ? 1 : 0);
    // The previous blocking call's time, for every rank's tuner alike (taken whether tuning or not,
    // so a report never outlives a change of plan).
    const CallTuner::Report report = state_.tuner().take_report();
    put(AgreementFields::kTunerTag, report.tag);
    put(AgreementFields::kTunerTime, report.ns);
    agree_since_ = profile_clock_ns();
    for (std::size_t j = 0; j < bins && !local; ++j) {
        const std::uint64_t lo = std::min(blocks, j * width);
        const std::uint64_t hi = std::min(blocks, lo + width);
        put(AgreementFields::kHeader + j, static_cast<std::int64_t>(lo < hi ? source().count(lo, hi) : 0));
    }
    MPI_Request r = MPI_REQUEST_NULL;
    mpi_.add(Library::get().agreement().iallreduce(agreement_, state_.comm(), &r), r, "agreement MPI_Iallreduce");
    enter(Stage::Agree);
}

// Every rank computes the same plan from the same agreed numbers.
void SparseOperation::on_agreed() {
    const std::vector<SumMax> &v = agreement_;
    const int workers = state_.size();
    if (v[AgreementFields::kError].max > 0) {
        if (call_.local != SparseCall::Local::None)
            error_ = local_error();
        else if (v[AgreementFields::kError].max == kFailure)
            error_ = OpError{ErrorId::RemoteFailure, "before the data moved"};
        else
            error_ = OpError{ErrorId::RemoteArgument, {}};
        finish();
        return;
    }
    for (std::size_t f : {AgreementFields::kCount, AgreementFields::kType, AgreementFields::kOp,
                          AgreementFields::kBlockElems, AgreementFields::kAlgorithm, AgreementFields::kOutput}) {
        if (!all_equal(v[f], workers)) {
            error_ = OpError{ErrorId::ArgumentMismatch, {}};
            finish();
            return;
        }
    }
    // Each rank counts its own blocks, so honest counts lie in [0, blocks]; anything else would size
    // the allgather's records (a peer's count is everyone's record size). Refused on every rank alike,
    // as a mismatch is: the agreed values are the same everywhere.
    const SumMax &nonzero = v[AgreementFields::kNonzero];
    const std::uint64_t blocks = call_.layout.num_blocks();
    std::uint64_t most = 0;  // every rank's blocks (beyond 2^64: no bound on the sum, which wraps)
    if (nonzero.max < 0 || static_cast<std::uint64_t>(nonzero.max) > blocks || nonzero.sum < 0 ||
        (!__builtin_mul_overflow(blocks, static_cast<std::uint64_t>(workers), &most) &&
         static_cast<std::uint64_t>(nonzero.sum) > most)) {
        error_ = OpError{ErrorId::ProtocolViolation, "the agreement's block counts exceed the vector's blocks"};
        finish();
        return;
    }
    const Group &group = state_.group();
    Demand &d = demand_;
    d.workers = workers;
    d.aggregators = static_cast<int>(group.aggregators.size());
    d.dedicated = group.dedicated;
    d.layout = call_.layout;
    d.nonzero_sum = static_cast<std::uint64_t>(v[AgreementFields::kNonzero].sum);
    d.nonzero_max = static_cast<std::uint64_t>(v[AgreementFields::kNonzero].max);
    d.bins.assign(v.begin() + AgreementFields::kHeader, v.end());
    d.bin_width = bin_width(call_.layout.num_blocks(), d.bins.size());
    d.output_to_zero = call_.output_to_zero;
    d.device = v[AgreementFields::kDevice].max > 0;
    d.in_place = v[AgreementFields::kInPlace].sum == workers;  // on some ranks only: copies remain
    d.nodes = state_.nodes();
    d.ranks_per_node = state_.ranks_per_node();
    d.node_multicast = state_.config().node_multicast;
    d.dense_output = call_.allow_dense;
    d.cores_shared = state_.cores_shared();
    make_plan(d, state_.config(), plan_);
    if (!call_.sparse_capable) plan_.algorithm = Algorithm::Dense;
    if (call_.sparse_capable && !call_.allow_dense && plan_.algorithm == Algorithm::Dense) {
        plan_.algorithm =
            plan_.cost.allgather_us < plan_.cost.aggregator_us ? Algorithm::Allgather : Algorithm::Aggregator;
        if (plan_.algorithm == Algorithm::Aggregator) balance_shards(d, plan_.shard_bounds);
    }
    // One rank's allgather record must fit an MPI count; beyond that the aggregators serve.
    if (plan_.algorithm == Algorithm::Allgather && !allgather_fits()) {
        plan_.algorithm = Algorithm::Aggregator;
        balance_shards(d, plan_.shard_bounds);
    }
    tune_plan(v);
    planned(plan_.algorithm);
    switch (plan_.algorithm) {
    case Algorithm::Dense: go_dense(); break;
    case Algorithm::Allgather: start_allgather(); break;
    case Algorithm::Aggregator: start_stream(); break;
    }
}

bool SparseOperation::allgather_fits() const {
    return allgather_record_bytes(call_.layout, plan_.max_contribution) <= static_cast<std::uint64_t>(INT_MAX / 2);
}

// Measured times override the model where the tuner has them (every rank has the same table and the
// same agreed report, so every rank makes the same change to the plan).
void SparseOperation::tune_plan(const std::vector<SumMax> &v) {
    CallTuner &tuner = state_.tuner();
    const int ranks = state_.size();
    const SumMax &tag = v[AgreementFields::kTunerTag];
    if (all_equal(tag, ranks)) tuner.learn(CallTuner::Report{tag.max, v[AgreementFields::kTunerTime].max});
    if (!state_.tuning() || state_.config().algorithm != AlgorithmChoice::Auto || !call_.sparse_capable) return;
    unsigned allowed = 1u << static_cast<int>(Algorithm::Aggregator);
    if (call_.allow_dense) allowed |= 1u << static_cast<int>(Algorithm::Dense);
    if (allgather_fits()) allowed |= 1u << static_cast<int>(Algorithm::Allgather);
    const std::uint32_t shape = CallTuner::shape_of(demand_, allowed);
    const Algorithm model = plan_.algorithm;
    const Algorithm chosen = tuner.choose(shape, model, plan_.cost, allowed, blocking());
    if (debug_level() >= 2 && state_.rank() == 0) trace_tuning(shape, model, chosen);
    if (chosen != plan_.algorithm) {
        plan_.algorithm = chosen;
        if (chosen == Algorithm::Aggregator) balance_shards(demand_, plan_.shard_bounds);
    }
    // A dense streak skips the agreements that carry the times: not while the shape is measured
    // by blocking calls (non-blocking ones never measure), not for a call that explores, and not
    // for dense taken against the model: the streak would keep that measured choice, unmeasured,
    // for DenseStreak::kReprobeEvery calls, and at the same count at other densities (over 10 Gbit/s
    // a noisy choice of dense at 1 MiB 1% ran a whole 0.1% row 1.9x slower than the fastest).
    dense_streak_allowed_ =
        chosen == model && !tuner.explored() && (!blocking() || tuner.settled(shape, model, plan_.cost, allowed));
    if (blocking()) {
        // Dense as the model's choice runs as a streak once chosen, without this agreement (3.4 ms
        // of a 2 MiB call over the emulated 1 Gbit/s links): timed from the agreement's end, as it
        // will run. Every other choice needs the agreement on each call.
        const bool streak_when_chosen = chosen == Algorithm::Dense && chosen == model;
        tuner.expect(shape, chosen, streak_when_chosen ? profile_clock_ns() : agree_since_);
        tuned_ = true;
    }
}

// MPIX_SPARSE_DEBUG=2: one line per tuned call, what the model predicted and the tuner measured.
void SparseOperation::trace_tuning(std::uint32_t shape, Algorithm model, Algorithm chosen) const {
    static const char *const names[] = {"dense", "aggregator", "allgather"};
    const CallTuner &tuner = state_.tuner();
    const auto us = [&](Algorithm a) { return tuner.measured_us(shape, a); };
    std::fprintf(stderr,
                 "mpix_sparse: context %u tune shape %u: model %s, runs %s%s; predicted / measured us: dense %.0f / "
                 "%.0f, aggregator %.0f / %.0f, allgather %.0f / %.0f\n",
                 state_.context(), shape, names[static_cast<int>(model)], names[static_cast<int>(chosen)],
                 tuner.explored() ? " (measuring)" : "", plan_.cost.dense_us, us(Algorithm::Dense),
                 plan_.cost.aggregator_us, us(Algorithm::Aggregator), plan_.cost.allgather_us,
                 us(Algorithm::Allgather));
}

std::optional<Phase> SparseOperation::phase_of(Stage stage) {
    switch (stage) {
    case Stage::Agree: return Phase::Agreement;
    case Stage::Dense:
    case Stage::DenseByCaller: return Phase::Dense;
    case Stage::Gather: return Phase::Allgather;
    case Stage::Stream: return Phase::Stream;
    case Stage::Barrier: return Phase::Barrier;
    case Stage::Idle:
    case Stage::Done: break;
    }
    return std::nullopt;
}

// Moves to `next`; when profiling, the time spent in the stage left goes to its phase. The
// communicator's profiling setting is looked up as the operation leaves Idle (each start).
void SparseOperation::enter(Stage next) {
    if (stage_ == Stage::Idle) profile_ = state_.profile();
    if (profile_ != nullptr) {
        const std::int64_t now = profile_clock_ns();
        if (const auto phase = phase_of(stage_)) profile_->add(*phase, now - stage_since_);
        stage_since_ = now;
    }
    stage_ = next;
}

void SparseOperation::go_dense() {
    algorithm_ = Algorithm::Dense;
    enter(Stage::Dense);
    try {
        start_dense();
    } catch (const std::bad_alloc &) {
        // start_dense allocates before its requests go out: without its buffers there is nothing to
        // join the peers' dense collective with.
        cannot_join({ErrorId::OutOfMemory, "the dense path's buffers"});
    }
}

// This rank cannot enter the collective stage its peers enter now. Leaving it out would pair this
// rank's next collective call with theirs, so the communicator breaks: this call and later ones fail
// here (the peers, left waiting in the stage, learn of it as of a rank that stopped: by their timeout).
void SparseOperation::cannot_join(OpError error) {
    if (state_.size() == 1) {  // no peers to pair with
        if (!error_) error_ = std::move(error);
        finish();
        return;
    }
    state_.break_state(error);  // abandons this operation, the communicator's active one
}

void SparseOperation::start_allgather() {
    algorithm_ = Algorithm::Allgather;
    const int ranks = state_.size();
    record_bytes_ = static_cast<std::size_t>(allgather_record_bytes(call_.layout, plan_.max_contribution));
    BufferPool &pool = scratch().resources.buffers;
    scratch().resources.profile = profile_;
    gathered_ = pool.acquire(record_bytes_ * static_cast<std::size_t>(ranks));
    // Packed straight into this rank's slot of the gathered records: no copy of its own record. A
    // rank that failed since the agreement still joins, with a record that tells its peers.
    std::byte *mine = gathered_.data() + record_bytes_ * static_cast<std::size_t>(state_.rank());
    if (error_)
        mark_record_failed(mine);
    else
        pack_record(source(), call_.layout, plan_.max_contribution, mine);
    MPI_Request r = MPI_REQUEST_NULL;
    mpi_.add(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered_.data(), static_cast<int>(record_bytes_),
                            MPI_BYTE, state_.comm(), &r),
             r, "MPI_Iallgather");
    counters_.bytes_sent += record_bytes_ * static_cast<std::uint64_t>(ranks - 1);
    counters_.bytes_received += record_bytes_ * static_cast<std::uint64_t>(ranks - 1);
    enter(Stage::Gather);
}

void SparseOperation::start_stream() {
    algorithm_ = Algorithm::Aggregator;
    unstreamed_shared_ = nullptr;  // the closing barrier recycles it, whatever happens from here
    try {
        if (state_.config().fail_at == FailPoint::StreamMemory) throw std::bad_alloc();
        make_stream();
    } catch (const std::bad_alloc &) {
        stream_cannot_start({ErrorId::OutOfMemory, "stream start"});  // short: no allocation
        return;
    } catch (const Error &e) {
        stream_cannot_start({e.id(), e.detail()});
        return;
    }
    enter(Stage::Stream);
    if (error_) stream_->fail(error_);  // failed before the stream: its peers must learn of it
    // The stream owns each message from here (moving one empties it in held_). One that a step throws
    // on fails the stream, as a failure in its own steps does, and the rest still go to it.
    for (InboundMessage &m : held_) {
        try {
            stream_->on_message(std::move(m));
        } catch (const Error &e) {
            stream_->fail({e.id(), e.detail()});
        } catch (const std::bad_alloc &) {
            stream_->fail({ErrorId::OutOfMemory, "taking a message that came early"});
        }
        state_.links().release(m);  // still here only when the step threw before taking it
    }
    held_.clear();
}

// This rank's stream cannot be made (out of memory, a transport error) while its peers start theirs:
// an Abort to each ends theirs, as a failed stream's would, and this rank meets them at the closing
// barrier, so the communicator stays in step. Only when even the Aborts cannot go out does it break
// (the peers then wait for their timeout, as for a rank that stopped). Whatever may allocate comes
// before the Aborts: once they are out, this rank must reach the barrier. (A stream whose restart
// failed half-way is restarted again at the next start.)
void SparseOperation::stream_cannot_start(OpError error) {
    if (!error_) error_ = std::move(error);
    release_held();  // messages kept for the stream
    if (!state_.abort_to_peers(seq())) {
        cannot_join(error_);
        return;
    }
    start_barrier();
}

void SparseOperation::make_stream() {
    const Group &group = state_.group();
    // Field by field, so a restart reuses the vectors' memory.
    spec_.context = state_.context();
    spec_.seq = seq();
    spec_.layout = call_.layout;
    spec_.type = call_.type;
    spec_.op = call_.op;
    spec_.worker_peer = group.workers;
    spec_.aggregator_peer = group.aggregators;
    spec_.shard_bounds = plan_.shard_bounds;
    spec_.my_worker = group.my_worker();
    spec_.my_aggregator = group.my_aggregator();
    spec_.fanout = &group.fanout;
    spec_.message_bytes = state_.config().message_bytes;
    spec_.window = state_.config().window;
    spec_.fail_at = state_.config().fail_at;
    scratch().resources.profile = profile_;
    if (spec_.my_aggregator >= 0) {
        scratch().last_shard_vector = call_.layout.num_blocks();
        scratch().last_shard_lo = spec_.shard_lo(spec_.my_aggregator);
        scratch().last_shard_hi = spec_.shard_hi(spec_.my_aggregator);
    }
    // A persistent request's previous stream is restarted (same spec object, buffers and sinks).
    if (stream_)
        stream_->restart();
    else
        stream_.emplace(spec_, state_.links(), scratch().resources, counters_, &source(), &sink(), group.rank);
}

void SparseOperation::start_barrier() {
    if (!error_ && stream_ && stream_->error()) error_ = stream_->error();
    store_fence();  // results written with streaming stores are visible before anyone reads them
    MPI_Request r = MPI_REQUEST_NULL;
    mpi_.add(MPI_Ibarrier(state_.comm(), &r), r, "MPI_Ibarrier");
    enter(Stage::Barrier);
}

void SparseOperation::on_message(InboundMessage &&message) {
    if (stage_ == Stage::Stream) {
        stream_->on_message(std::move(message));
    } else if (stage_ == Stage::Done || stage_ == Stage::Barrier || held_.size() >= CommState::kMaxEarlyMessages) {
        state_.links().release(message);  // late (the stream is over) or a flood
    } else {
        held_.push_back(std::move(message));
    }
}

void SparseOperation::fail(OpError error) {
    if (stage_ == Stage::Done) return;
    if (stage_ == Stage::Idle) {
        // Failed while activating, before any collective stage: nothing to take part in.
        error_ = std::move(error);
        finish();
        return;
    }
    if (stage_ == Stage::Stream)
        stream_->fail(std::move(error));
    else if (!error_)
        error_ = std::move(error);
}

void SparseOperation::abandon(OpError error) {
    // Nothing is released: pending MPI requests and transfers may still write into the agreement,
    // the gathered records, the held messages and the scratch, all kept with the parked operation.
    stage_ = Stage::Done;
    error_ = std::move(error);
    mark_abandoned();
}

bool SparseOperation::step() {
    switch (stage_) {
    case Stage::Idle:
    case Stage::Done: return false;
    case Stage::Agree:
        if (!mpi_.test()) return false;
        on_agreed();
        return true;
    case Stage::Dense:
        if (!mpi_.test()) return false;
        finish_dense();
        finish();
        return true;
    case Stage::DenseByCaller:
        if (!caller_ran_) return false;
        if (caller_error_ && !error_) error_ = *caller_error_;
        if (!error_) finish_dense();  // as the Dense stage: nothing reduced is taken from a failed call
        finish();
        return true;
    case Stage::Gather: {
        if (!mpi_.test()) return false;
        if (!error_) {
            PhaseTimer reducing(profile_, Phase::Reduce);
            reduce_gathered(gathered_.data(), state_.size(), record_bytes_, call_.layout, call_.type, call_.op,
                            plan_.max_contribution, scratch().resources, sink());
            store_fence();  // the output's streaming stores are visible before anyone reads it
            finish_sparse();
        }
        finish();
        return true;
    }
    case Stage::Stream: {
        const bool moved = stream_->advance();
        if (!stream_->done()) return moved;
        start_barrier();
        return true;
    }
    case Stage::Barrier:
        if (!mpi_.test()) return false;
        // Every rank has ended its stream: no peer reads this rank's shared memory any more.
        if (state_.size() > 1) state_.links().recycle_shared();
        scratch().resources.reap();
        if (!error_) finish_sparse();
        finish();
        return true;
    }
    return false;
}

void SparseOperation::run_caller_work() {
    // Outside the engine lock: nothing here touches state another thread may change while the
    // operation waits in DenseByCaller (it does not advance until caller_ran_ is set, under the lock).
    std::optional<OpError> error;
    try {
        dense_by_caller();
    } catch (const Error &e) {
        error = OpError{e.id(), e.detail()};
    }
    std::lock_guard<std::recursive_mutex> engine(Library::engine_lock());
    caller_error_ = std::move(error);
    caller_ran_ = true;
}

bool SparseOperation::progress() {
    try {
        return step();
    } catch (const Error &e) {
        // An MPI call of a collective stage failed (or gathered records were malformed): the stage
        // cannot be completed or retried, so the operation ends here with that error. (A stream
        // failure instead goes through fail(), which tells the peers.)
        if (stage_ == Stage::Stream || stage_ == Stage::Done) throw;
        if (!error_) error_ = OpError{e.id(), e.detail()};
        finish();
        return true;
    } catch (const std::bad_alloc &) {
        if (stage_ == Stage::Stream || stage_ == Stage::Done) throw;  // as above: CommState fails the stream
        // Still agreeing: the plan or the next stage's buffers could not be had. Planning again would
        // not do (the tuner counts each plan, so this rank could choose unlike its peers), and the
        // peers are entering that stage now.
        if (stage_ == Stage::Agree) {
            cannot_join({ErrorId::OutOfMemory, "planning the call after its agreement"});
            return true;
        }
        // After a stage's collective completed (its local results): every rank has left that stage.
        if (!error_) error_ = OpError{ErrorId::OutOfMemory, "finishing the call"};
        finish();
        return true;
    }
}

void SparseOperation::finish() {
    enter(Stage::Done);
    if (tuned_) {
        // A failed call's time says nothing about its algorithm.
        if (error_)
            state_.tuner().discard();
        else
            state_.tuner().completed(profile_clock_ns());
        tuned_ = false;
    }
    if (profile_ != nullptr && !state_.is_level()) ++profile_->calls;  // a level's call is part of its parent's
    CommStats &stats = state_.stats();
    stats.last_algorithm = static_cast<int>(algorithm_);
    if (algorithm_ == Algorithm::Dense) ++stats.dense_fallbacks;
    stats.bytes_sent += static_cast<std::int64_t>(counters_.bytes_sent);
    stats.bytes_in_place += static_cast<std::int64_t>(counters_.bytes_in_place);
    stats.bytes_received += static_cast<std::int64_t>(counters_.bytes_received);
    release_held();
    if (unstreamed_shared_ != nullptr) {
        // Nobody was sent a reference to it: the most recent allocation of the segment, taken back.
        state_.links().trim_shared(unstreamed_shared_, 0);
        unstreamed_shared_ = nullptr;
    }
    // The scratch (and the stream's containers) stay with the operation until it is destroyed: a
    // persistent request's next start reuses them without allocating.
}

std::string SparseOperation::describe() const {
    static const char *const names[] = {"idle",      "agreeing",  "dense",   "dense (blocking MPI_Allreduce)",
                                        "allgather", "streaming", "barrier", "done"};
    std::string s = "operation " + std::to_string(seq()) + " (" + names[static_cast<int>(stage_)] + ")";
    if (stage_ == Stage::Stream) s += ": " + stream_->describe();
    return s;
}

}  // namespace mpix::sparse::detail
