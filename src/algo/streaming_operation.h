// One streamed reduction at one rank: its worker role, its aggregator role, or both (colocated), fed
// by the messages of its (context, seq), and advanced until both roles are done. When it fails here
// (a malformed message, a transport error, an injected failure) it tells every peer of the stream
// with an Abort message, so none of them waits for it; an Abort from a peer fails it the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algo/aggregator_role.h"
#include "algo/worker_role.h"
#include "core/operation.h"

namespace mpix::sparse::detail {

class StreamingOperation {
  public:
    // source/sink: this rank's data and output when it is a worker (spec.my_worker >= 0).
    // group_rank: this rank in the group the links were made over (the Abort's sender field).
    StreamingOperation(const StreamSpec &spec, Transport &transport, StreamResources &resources, OpCounters &counters,
                       const ContributionSource *source, ResultSink *sink, int group_rank = -1);
    ~StreamingOperation();
    StreamingOperation(const StreamingOperation &) = delete;
    StreamingOperation &operator=(const StreamingOperation &) = delete;

    const StreamSpec &spec() const { return spec_; }
    // Starts over with the same spec object (its shard bounds may have changed; its type, op, layout
    // and groups may not): a persistent request's next start, allocating nothing.
    void restart();
    // The roles' park(), and the aborts to the drain lists: an ended operation kept for a restart
    // (a dedicated aggregator's) holds nothing the transport may still touch.
    void park();
    // A message of this operation's context and seq: checked against the spec, then dispatched.
    void on_message(InboundMessage &&message);
    // Advances the roles; on a local failure, sends the Aborts. True when anything moved.
    bool advance();
    bool done() const;
    // Fails the operation from outside (a malformed message for it arrived): peers are told.
    void fail(OpError error);
    // No error when the operation succeeded.
    const OpError &error() const;
    std::string describe() const;

  private:
    void abort_peers();
    // Room in the drain lists for what the roles and the aborts may move there at a restart or teardown.
    void reserve_draining();
    // Records in the resources' recyclers for what the roles may have in flight at once.
    void reserve_pools();

    const StreamSpec &spec_;
    Transport &transport_;
    StreamResources &resources_;
    int group_rank_;
    OpError error_;
    bool remote_ = false;  // the failure came from a peer's Abort: not passed on
    bool aborts_sent_ = false;
    bool fetches_settled_ = false;  // after a failure: no result fetch still writes into the output
    std::vector<std::unique_ptr<OutboundMessage>> aborts_;
    std::optional<WorkerRole> worker_;
    std::optional<AggregatorRole> aggregator_;
};

}  // namespace mpix::sparse::detail
