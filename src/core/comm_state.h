// Everything the library keeps per communicator: configuration, the group of workers and
// aggregators, the private duplicate used for the library's own MPI collectives, the UCX links, the
// line of operations in flight, counters, and scratch memory that operations borrow.
//
// Operations are started in call order (the same on every rank, as MPI requires of collectives) and
// run one at a time in that order: the oldest is active, the others wait in line. Messages are routed
// by sequence number: to the active operation, or kept (bounded) for the next ones; anything else is
// a protocol violation.
//
// A watchdog guards the active operation: a peer found gone (a dead process on this machine, a
// failed UCX endpoint) or, with mpix_sparse_timeout, no progress for that long breaks the
// communicator: its operations end at once with the error, later ones fail with it at start, and
// nothing on it waits any more (MPI_Comm_free and MPI_Finalize included). Before a timeout breaks
// it, the rank tells its peers (Stalled) and waits a short grace for theirs, so that the error
// names the ranks it heard nothing from.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/call_tuner.h"
#include "core/config.h"
#include "core/dense_streak.h"
#include "core/group.h"
#include "core/node_layout.h"
#include "core/operation.h"
#include "core/phase_profile.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

class CommState;

// Two levels for hierarchical reduction: this rank's node, and one leader per node.
struct NodeHierarchy {
    MPI_Comm node = MPI_COMM_NULL;     // the ranks of this rank's node
    MPI_Comm leaders = MPI_COMM_NULL;  // rank 0 of each node (MPI_COMM_NULL elsewhere)
    std::unique_ptr<CommState> node_state, leader_state;
};

struct CommStats {
    std::int64_t calls = 0;
    std::int64_t bytes_sent = 0;
    std::int64_t bytes_received = 0;
    std::int64_t dense_fallbacks = 0;
    int last_algorithm = 0;
    std::int64_t bytes_in_place = 0;
};

// What may outlive its communicator's state and holds an operation on it: a request handle, which the
// user may still wait on, start or free after freeing the communicator (MPI completes operations in
// flight first). Told once, engine lock held, when the line is empty and the state is still whole, so
// it can dispose of its operation while that operation may still give back what it borrowed.
class StateObserver {
  public:
    virtual void state_closing() = 0;

  protected:
    ~StateObserver() = default;
};

class CommState final : public MessageSink, public Progressable {
  public:
    // Operations one peer may be ahead of this rank, and messages kept for operations not yet active:
    // beyond either, a peer is broken or hostile and the operation fails instead of holding memory.
    static constexpr std::uint64_t kMaxAhead = 2;
    static constexpr std::size_t kMaxEarlyMessages = 1 << 14;

    // Colocated: every rank of comm is a worker, config.aggregators of them (default all) aggregate.
    // With hierarchy (config.hierarchical on, or auto with several nodes and several ranks on some
    // node), it also builds the node and leader levels. Collective over comm; call without locks.
    CommState(MPI_Comm comm, const Config &config);
    // Dedicated worker: context, group and links were set up over the parent communicator by
    // MPIX_Sparse_comm_create. Collective over comm (the workers).
    CommState(MPI_Comm comm, const Config &config, std::uint32_t context, Group group,
              std::unique_ptr<Transport> links);
    ~CommState() override;
    CommState(const CommState &) = delete;
    CommState &operator=(const CommState &) = delete;

    MPI_Comm comm() const { return internal_; }  // private duplicate, MPI_ERRORS_RETURN
    int size() const { return size_; }
    int rank() const { return rank_; }
    const Config &config() const { return config_; }
    // Nodes the ranks are on and the most ranks on one node (1 and size() on one node).
    int nodes() const { return nodes_; }
    int ranks_per_node() const { return ranks_per_node_; }
    bool cores_shared() const { return cores_shared_; }
    // Whether a blocking call's dense path is MPI's blocking MPI_Allreduce rather than the
    // non-blocking one waited on: on one node Open MPI's blocking algorithms are up to 1.4x faster
    // than libnbc's; across nodes over TCP (the emulated cluster) libnbc's are (16 MiB, 4 nodes at
    // 1 Gbit/s: 253 ms against 356). Never with a timeout, which only the non-blocking wait keeps.
    // Every rank answers alike (settings and node count are agreed at creation).
    bool blocking_dense() const { return config_.timeout_s <= 0 && nodes_ == 1; }
    // Whether calls learn each algorithm's time and choose by it (Config::tune). Every rank answers
    // alike when the setting is alike (the agreement checks); a hierarchy level never does (its calls
    // are parts of its parent's).
    bool tuning() const {
        return parent_ == nullptr &&
               (config_.tune == TuneSetting::On || (config_.tune == TuneSetting::Auto && nodes_ > 1));
    }
    const Group &group() const { return group_; }
    std::uint32_t context() const { return context_; }
    bool created_by_comm_create() const { return created_by_comm_create_; }
    void set_created_by_comm_create() { created_by_comm_create_ = true; }
    // The node and leader levels, or null when calls reduce in one level.
    NodeHierarchy *hierarchy() { return hierarchy_.get(); }

    // Engine lock held for everything below.
    CommStats &stats() { return stats_; }
    // Where this communicator's calls time their phases, or null when profiling is off (a hierarchy
    // level's phases count in its parent, as its statistics do).
    PhaseProfile *profile() {
        if (parent_ != nullptr) return parent_->profile();
        return config_.profile ? &profile_ : nullptr;
    }
    PhaseProfile &profile_totals() { return profile_; }
    bool is_level() const { return parent_ != nullptr; }  // a node or leader level of a hierarchy
    DenseStreak &dense_streak() { return dense_streak_; }
    CallTuner &tuner() { return tuner_; }
    Transport &links();

    // Puts `op` in line and gives it its sequence number; it runs when those before it are done.
    // `op` must stay alive until it is retired.
    void start(Operation &op);
    // Takes a not-yet-active operation out of line (its caller failed before it could be waited on).
    // False when it is already running: then it must be waited for.
    bool withdraw(Operation &op);
    bool idle() const { return queue_.empty(); }
    // A call made at once instead of in line (blocking_dense_at_once): it uses up its sequence number
    // and counts as a call, as start() would, so the ranks' numbering stays the same.
    void skip_line() {
        ++stats_.calls;
        ++next_seq_;
    }
    // Advances the active operation; retires it when done and activates the next.
    bool progress() override;
    void on_message(InboundMessage &&message) override;

    // Scratch memory: a spare one (or null), and back when an operation ends (kept aside until the
    // transport has finished with it).
    std::unique_ptr<Reusable> take_scratch();
    void give_back(std::unique_ptr<Reusable> scratch);

    // A finished call's operation, kept so that the next call of the same shape reuses it (its
    // containers, stream and scratch) and a steady loop of calls allocates nothing: the one kept (or
    // null), and the one to keep instead, which must be retired without an error. Engine lock held.
    std::unique_ptr<Operation> take_spare_operation() { return std::move(spare_operation_); }
    void keep_spare_operation(std::unique_ptr<Operation> op);

    // Observers told when this state closes (engine lock held for both).
    void watch(StateObserver *observer) { observers_.push_back(observer); }
    void unwatch(StateObserver *observer);

    // Which node each rank (of comm()) is on, for a communicator built without learn_network (the
    // dedicated mode's workers): node count and ranks per node only, no link probe (link_ns stays as
    // configured). Collective-free; every rank must pass the same vector.
    void learn_nodes(const std::vector<int> &node_of_rank);

    // The error that broke this communicator (false when it works).
    const OpError &broken() const { return broken_; }
    // Breaks it (engine lock held): see the header comment. Spreads to its hierarchy levels and to
    // the communicator they belong to.
    void break_state(const OpError &error);
    // Tells every other rank of the group that this rank failed operation `seq` (an Abort each), for
    // an operation that fails before it has a stream to tell them with. False if they cannot be sent.
    bool abort_to_peers(std::uint64_t seq);

  private:
    // Tells dedicated aggregators this worker is leaving, once its operations are done (the
    // destructor): an aggregator leaves when every worker said goodbye.
    void say_goodbye();
    void build_hierarchy(const std::vector<int> &node_of_rank);
    void learn_network(const NodeLayout &layout);
    void reserve_queues();
    void activate_front();
    void fail_running(OpError error);
    // A malformed message fails the operation its header names, not whichever runs here: a peer may
    // be on the next operation while this rank ends the last one, which must not fail for it (and
    // the next must). One that ended here is left alone; one not active yet fails when it becomes so.
    void fail_named(std::uint64_t seq, OpError error);
    bool settle_lingering();
    void release(InboundMessage &message);
    // The watchdog, after each progress step of the active operation.
    void watch(bool moved);
    void send_stalled_notices();
    // Sends a header-only notice of `kind` for operation `seq` to every other rank of the group
    // (kept until sent; an unsettled earlier one is parked).
    void send_notices(MessageKind kind, std::uint64_t seq);
    std::string stall_report() const;

    MPI_Comm internal_ = MPI_COMM_NULL;
    int size_ = 1;
    int rank_ = 0;
    int nodes_ = 1, ranks_per_node_ = 1;
    bool cores_shared_ = false;  // some node runs more ranks than it has cores (agreed)
    Config config_;
    Group group_;
    std::uint32_t context_ = 0;
    std::unique_ptr<Transport> links_;
    std::unique_ptr<NodeHierarchy> hierarchy_;
    bool created_by_comm_create_ = false;
    bool goodbye_sent_ = false;

    // Engine lock:
    std::uint64_t next_seq_ = 0;
    CommStats stats_;
    PhaseProfile profile_;
    DenseStreak dense_streak_;
    CallTuner tuner_;
    // In sequence order; front() is active once activated. A vector, not a deque: a deque allocates
    // and frees a node as operations pass through, the vector keeps its memory.
    std::vector<Operation *> queue_;
    bool front_active_ = false;
    std::vector<InboundMessage> early_;  // messages of operations not yet active here (capacity kept)
    std::vector<StateObserver *> observers_;
    OpError pending_error_;      // a malformed message arrived while nothing was active
    HeldFailure named_failure_;  // a malformed message named an operation not active yet
    std::vector<std::unique_ptr<Reusable>> spare_, lingering_;
    std::unique_ptr<Operation> spare_operation_;  // holds a scratch of spare_'s while kept

    // Watchdog (engine lock):
    using Clock = std::chrono::steady_clock;
    OpError broken_;
    CommState *parent_ = nullptr;  // the communicator this one is a hierarchy level of
    bool front_moved_ = false;     // a message for the active operation arrived since the last step
    Clock::time_point last_moved_{}, last_polled_{}, last_liveness_check_{};
    Clock::time_point grace_end_{};  // Stalled notices sent: the timeout breaks the state then
    bool notices_sent_ = false;
    std::uint64_t stalled_seq_ = 0;
    std::vector<int> stalled_peers_;  // group ranks that told us they wait in stalled_seq_
    struct Notices;                   // Stalled notices in flight: headers and completions the transport holds
    std::shared_ptr<Notices> notices_;
};

}  // namespace mpix::sparse::detail
