// A block-sparse allreduce in two levels: inside each node (shared memory), then across one leader
// per node (the network: each node's data once, already combined), then the leader's result back
// to its node. Each level is an operation on that level's communicator state, started when the one
// before it is done; a level that fails still lets the next start (with its failure flagged), so
// every rank of every level learns of it instead of waiting.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "algo/block_allreduce.h"
#include "algo/node_broadcast.h"
#include "algo/operation_scratch.h"
#include "core/operation.h"

namespace mpix::sparse::detail {

class CommState;
struct NodeHierarchy;

class HierarchicalAllreduce final : public Operation {
  public:
    HierarchicalAllreduce(CommState &state, NodeHierarchy &levels, const void *sendbuf, void *recvbuf,
                          std::uint64_t count, MPI_Datatype datatype, MPI_Op op, BufferKinds kinds, bool local_failure);
    ~HierarchicalAllreduce() override;

    void activate() override;
    void on_message(InboundMessage &&message) override;
    bool progress() override;
    void fail(OpError error) override;
    void abandon(OpError error) override;
    bool done() const override { return stage_ == Stage::Done; }
    const OpError &error() const override { return error_; }
    std::string describe() const override;
    void reset() override;

  private:
    enum class Stage { Node, Leaders, Broadcast, Done };
    void start_broadcast();
    void finish();

    CommState &state_;
    NodeHierarchy &levels_;
    const void *sendbuf_;
    void *recvbuf_;
    std::uint64_t count_;
    MPI_Datatype datatype_;
    MPI_Op op_;
    BufferKinds kinds_;
    bool local_failure_;
    Stage stage_ = Stage::Node;
    std::int64_t broadcast_since_ = 0;  // profiling: when the node broadcast started
    OpError error_;
    std::unique_ptr<Operation> node_op_, leader_op_;
    std::unique_ptr<OperationScratch> scratch_;
    std::optional<NodeBroadcast> broadcast_;
};

}  // namespace mpix::sparse::detail
