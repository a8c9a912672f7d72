// Dedicated aggregator mode (OmniReduce's deployment): aggregator ranks hold no data. Inside
// MPIX_Sparse_comm_create they serve the workers' operations one after another, learning each
// operation's shape from its messages, until every worker has said goodbye (MPIX_Sparse_comm_free).
// An operation that fails here (or that a worker aborts) is told to its peers and ended; the
// service goes on with the next one.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "algo/op_counters.h"
#include "algo/stream_resources.h"
#include "algo/streaming_operation.h"
#include "core/config.h"
#include "core/group.h"
#include "core/operation.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

// Carves aggregators out of comm (collective). Workers get their new communicator; aggregators serve
// until all workers have left and get MPI_COMM_NULL.
MPI_Comm create_dedicated(MPI_Comm comm, const Config &config);

class DedicatedAggregator final : public MessageSink, public Progressable {
  public:
    DedicatedAggregator(const Config &config, Group group);
    ~DedicatedAggregator() override;
    void set_links(std::uint32_t context, Transport *links);
    // Engine lock held:
    void on_message(InboundMessage &&message) override;
    bool progress() override;
    // Every worker said goodbye and the last operation is complete.
    bool finished() const;
    // Gives up memory the transport may still touch (after a bounded wait for it).
    bool settle() { return resources_.reap(); }
    // The operation in flight (if the service is left early) drains into the resources first.
    void abandon() {
        serving_ = false;
        op_.reset();
        resources_.abandon();
    }

  private:
    bool serve();
    bool start_next();
    void finish_op();
    void fail_current(OpError error);
    void drop_queued(std::uint64_t seq);

    Config config_;
    std::uint32_t context_ = 0;
    Group group_;
    Transport *links_ = nullptr;
    StreamResources resources_;
    OpCounters counters_;
    StreamSpec spec_;
    std::optional<StreamingOperation> op_;  // kept between operations of one shape
    bool serving_ = false;                  // op_ serves operation spec_.seq
    // Messages of operations not started yet. A vector: a deque used as a queue allocates a node
    // every few messages; this grows to its most and stays.
    std::vector<InboundMessage> queued_;
    std::uint64_t next_seq_ = 0;
    HeldFailure named_failure_;       // a malformed message named an operation not started yet
    bool setting_up_ = false;         // start_next is between spec_.seq and a running op_
    std::vector<bool> said_goodbye_;  // per worker: goodbyes count once
    int goodbyes_ = 0;
};

}  // namespace mpix::sparse::detail
