// Everything the library keeps per communicator: configuration, the group of workers and
// aggregators, the private duplicate used for the library's own MPI collectives, the UCX links (made
// on the first call that streams), the operation sequence, counters, and reusable scratch memory.
// It is also the MessageSink of its context: messages of the running operation go to it, messages of
// later operations wait in a queue until that operation starts.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algo/op_counters.h"
#include "algo/stream_resources.h"
#include "algo/streaming_operation.h"
#include "core/block_bitmap.h"
#include "core/config.h"
#include "core/dense_streak.h"
#include "core/group.h"
#include "core/pair_sort.h"
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
};

class CommState final : public MessageSink {
  public:
    // Colocated: every rank of comm is a worker, config.aggregators of them (default all) aggregate.
    // With hierarchy (config.hierarchical on, or auto with several nodes and several ranks on some
    // node), it also builds the node and leader levels. Collective over comm.
    CommState(MPI_Comm comm, const Config &config);
    // Dedicated worker: group and links were set up over the parent communicator by
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
    const Group &group() const { return group_; }
    std::uint32_t context() const { return context_; }
    bool created_by_comm_create() const { return created_by_comm_create_; }
    void set_created_by_comm_create() { created_by_comm_create_ = true; }

    // Starts a collective call: counts it and returns its sequence number.
    std::uint64_t begin_call();
    CommStats &stats() { return stats_; }
    BlockBitmap &bitmap() { return bitmap_; }
    StreamResources &resources() { return resources_; }
    PairSortScratch &pair_scratch() { return pair_scratch_; }
    DenseStreak &dense_streak() { return dense_streak_; }
    // The node and leader levels, or null when calls reduce in one level.
    NodeHierarchy *hierarchy() { return hierarchy_.get(); }

    // Runs a streamed operation to completion (connecting the links first if needed: collective).
    // Throws Error on transport or protocol failure. Adds its traffic to the counters.
    void run_stream(const StreamSpec &spec, const ContributionSource *source, ResultSink *sink);

    void on_message(InboundMessage &&message) override;

    // Tells dedicated aggregators this worker is leaving (before the communicator goes away).
    void say_goodbye();

  private:
    void build_hierarchy(const std::vector<int> &node_of_rank);
    Transport &links();
    void finish_together(Transport &transport);

    MPI_Comm internal_ = MPI_COMM_NULL;
    int size_ = 1;
    int rank_ = 0;
    Config config_;
    Group group_;
    std::uint32_t context_ = 0;
    std::unique_ptr<Transport> links_;
    std::uint64_t next_seq_ = 0;
    CommStats stats_;
    BlockBitmap bitmap_;
    StreamResources resources_;
    PairSortScratch pair_scratch_;
    DenseStreak dense_streak_;
    std::unique_ptr<NodeHierarchy> hierarchy_;
    StreamingOperation *active_ = nullptr;
    std::deque<InboundMessage> early_;  // messages of operations this rank has not started
    std::string protocol_error_;        // a malformed message arrived between operations
    bool created_by_comm_create_ = false;
    bool goodbye_sent_ = false;
};

}  // namespace mpix::sparse::detail
