// Dedicated aggregator mode (OmniReduce's deployment): aggregator ranks hold no data. Inside
// MPIX_Sparse_comm_create they serve the workers' operations one after another, learning each
// operation's shape from its messages, until every worker has said goodbye (MPIX_Sparse_comm_free).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "algo/op_counters.h"
#include "algo/stream_resources.h"
#include "algo/streaming_operation.h"
#include "core/config.h"
#include "core/group.h"
#include "transport/transport.h"

namespace mpix::sparse::detail {

// Carves aggregators out of comm (collective). Workers get their new communicator; aggregators serve
// until all workers have left and get MPI_COMM_NULL.
MPI_Comm create_dedicated(MPI_Comm comm, const Config &config);

class DedicatedAggregator final : public MessageSink {
  public:
    DedicatedAggregator(const Config &config, std::uint32_t context, Group group, Transport &links);
    // Returns once every worker said goodbye and the last operation is complete.
    void serve();
    void on_message(InboundMessage &&message) override;

  private:
    bool start_next();
    void finish();

    Config config_;
    std::uint32_t context_;
    Group group_;
    Transport &links_;
    StreamResources resources_;
    OpCounters counters_;
    StreamSpec spec_;
    std::optional<StreamingOperation> op_;
    std::deque<InboundMessage> queued_;
    std::uint64_t next_seq_ = 0;
    int goodbyes_ = 0;
};

}  // namespace mpix::sparse::detail
