// The stages every sparse collective shares, as a state machine that never waits:
//   agree   one MPI_Iallreduce: arguments, errors, per-bin non-zero counts (skipped when the dense
//           path is chosen from the arguments alone);
//   run     the plan's algorithm: dense (MPI_Iallreduce), allgather (MPI_Iallgather, then every rank
//           reduces the records), or the aggregators' stream;
//   barrier after a stream, an MPI_Ibarrier: no rank returns (and stops progressing) before every
//           rank has its results (rendezvous sends complete only on the receiver's acknowledgement,
//           and results may be sent straight from an output buffer).
// A failure never skips a collective stage that the other ranks enter: it is recorded, the stream
// (if any) tells its peers with Abort messages, and the operation ends with the error after the
// stages every rank shares. Variants (block, element) supply the contribution, the result sink and
// the dense path.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algo/contribution_source.h"
#include "algo/mpi_requests.h"
#include "algo/op_counters.h"
#include "algo/operation_scratch.h"
#include "algo/result_sink.h"
#include "algo/stream_spec.h"
#include "algo/streaming_operation.h"
#include "core/agreement.h"
#include "core/block_layout.h"
#include "core/element_type.h"
#include "core/operation.h"
#include "core/phase_profile.h"
#include "core/planner.h"

namespace mpix::sparse::detail {

class CommState;

// What the ranks agree on for one call.
struct SparseCall {
    BlockLayout layout;
    ElementType type = ElementType::F32;
    ReduceOp op = ReduceOp::Sum;
    bool sparse_capable = true;   // false: type/op codes are placeholders, the dense path serves
    bool output_to_zero = false;  // the sparse paths must zero a dense output themselves
    bool allow_dense = true;      // false: a sparse output needs the union (element variant)
    std::uint64_t nonzero = 0;    // this rank's blocks with data
    bool device = false;          // this rank's buffers are (partly) device memory: agreed, for the plan
    bool in_place = false;        // peers read this rank's input and output where they are: agreed, for the tuner
    // This rank's own error found before the agreement (it still takes part so the others learn of
    // it instead of waiting): none, an argument error, or a failure.
    enum class Local { None, Argument, Failure } local = Local::None;
};

class SparseOperation : public Operation {
  public:
    explicit SparseOperation(CommState &state);
    ~SparseOperation() override;

    void on_message(InboundMessage &&message) override;
    bool progress() override;
    void fail(OpError error) override;
    void abandon(OpError error) override;
    bool done() const override { return stage_ == Stage::Done; }
    const OpError &error() const override { return error_; }
    std::string describe() const override;
    void reset() override;
    bool caller_work_pending() const override { return stage_ == Stage::DenseByCaller && !caller_ran_; }
    void run_caller_work() override;

    // After done(): the algorithm that served it, and what it moved.
    Algorithm algorithm() const { return algorithm_; }
    const OpCounters &counters() const { return counters_; }

  protected:
    enum class Stage { Idle, Agree, Dense, DenseByCaller, Gather, Stream, Barrier, Done };

    // Issues the dense path's MPI requests into mpi_ (and does its local work), or asks for
    // dense_by_caller().
    virtual void start_dense() = 0;
    // The dense path as a blocking MPI call, run by the waiting caller's thread (run_caller_work).
    virtual void dense_by_caller() {}
    // The agreed plan's algorithm, before it runs (every rank learns the same).
    virtual void planned(Algorithm) {}
    // True when the caller waits for this operation at once (its time is the call's: CallTuner).
    virtual bool blocking() const { return false; }
    // After planning: false while the tuner still measures this call's shape, when a dense plan must
    // not start a dense streak (which skips the agreements that carry the measurements).
    bool dense_streak_allowed() const { return dense_streak_allowed_; }
    // After the dense path's requests completed.
    virtual void finish_dense() {}
    // After the allgather or the stream completed without error.
    virtual void finish_sparse() {}
    // The error this rank raises for its own local error (Local::Argument / Failure).
    virtual OpError local_error() const = 0;
    virtual const ContributionSource &source() const = 0;
    virtual ResultSink &sink() = 0;

    // The scratch memory of this operation, borrowed from the communicator on first use (engine lock
    // held) and given back when the operation is destroyed.
    OperationScratch &scratch();
    CommState &state() { return state_; }
    // Starts the agreement for `call` (kept; must outlive the stage).
    void agree(const SparseCall &call);
    // Goes to the dense path directly (decided from arguments alone: no agreement).
    void go_dense();
    // From start_dense(): the dense path is dense_by_caller(), run by the caller's thread.
    void defer_dense_to_caller() { enter(Stage::DenseByCaller); }
    // Ends the operation: statistics, scratch back to the communicator.
    void finish();
    // Out of memory for a collective stage the peers enter: ends the operation by breaking the
    // communicator (on one rank, just ends it with `error`).
    void cannot_join(OpError error);
    // Shared memory this operation took before its stream (the scan's staging, from `p` on): the
    // stream's closing barrier recycles it; an operation that ends without a stream gives it back.
    // Giving back takes only the segment's most recent allocation, so nothing else allocates from
    // the segment between the scan and start_stream() or finish() (the agreement does not).
    void hold_shared(const std::byte *p) { unstreamed_shared_ = p; }

    MpiRequests mpi_;
    SparseCall call_;

  private:
    bool step();
    void enter(Stage next);
    static std::optional<Phase> phase_of(Stage stage);
    void release_held();
    void on_agreed();
    void tune_plan(const std::vector<SumMax> &agreed);
    void trace_tuning(std::uint32_t shape, Algorithm model, Algorithm chosen) const;
    bool allgather_fits() const;
    void start_allgather();
    void start_stream();
    void make_stream();  // the stream of this start, made or restarted
    void stream_cannot_start(OpError error);
    void start_barrier();

    CommState &state_;
    std::unique_ptr<OperationScratch> scratch_;
    Stage stage_ = Stage::Idle;
    OpError error_;
    Algorithm algorithm_ = Algorithm::Dense;
    OpCounters counters_;
    PhaseProfile *profile_ = nullptr;  // this start's communicator's profile, when profiling
    std::int64_t stage_since_ = 0;     // when the current stage began (profiling only)
    std::vector<SumMax> agreement_;
    Demand demand_;
    Plan plan_;
    BufferPool::Buffer gathered_;
    std::size_t record_bytes_ = 0;
    StreamSpec spec_;
    std::optional<StreamingOperation> stream_;
    std::vector<InboundMessage> held_;  // messages that came before this rank's stream started
    bool caller_ran_ = false;           // DenseByCaller: the caller's blocking call returned
    std::optional<OpError> caller_error_;
    std::int64_t agree_since_ = 0;  // when the agreement began (the tuner's clock)
    bool tuned_ = false;            // this call reports its time to the tuner
    bool dense_streak_allowed_ = true;
    const std::byte *unstreamed_shared_ = nullptr;  // hold_shared
};

}  // namespace mpix::sparse::detail
