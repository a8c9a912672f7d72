// One streamed reduction at one rank: its worker role, its aggregator role, or both (colocated), fed
// by the messages of its (context, seq), and driven until both roles are done.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "algo/aggregator_role.h"
#include "algo/worker_role.h"

namespace mpix::sparse::detail {

class StreamingOperation {
  public:
    // source/sink: this rank's data and output when it is a worker (spec.my_worker >= 0).
    StreamingOperation(const StreamSpec &spec, Transport &transport, StreamResources &resources, OpCounters &counters,
                       const ContributionSource *source, ResultSink *sink);

    const StreamSpec &spec() const { return spec_; }
    // A message of this operation's context and seq: checked against the spec, then dispatched.
    void on_message(InboundMessage &&message);
    bool advance();
    bool done() const;
    // Ends the operation with an error (a malformed message for it arrived).
    void fail(const std::string &why) {
        if (error_.empty()) error_ = why;
    }
    // Empty when the operation succeeded.
    std::string error() const;
    std::string describe() const;

  private:
    const StreamSpec &spec_;
    Transport &transport_;
    std::string error_;
    std::optional<WorkerRole> worker_;
    std::optional<AggregatorRole> aggregator_;
};

// Drives `op` until it is done: progress, advance, and when nothing moves, wait on the transport
// (which sleeps instead of spinning once it has polled for a while). With MPIX_SPARSE_DEBUG set, an
// operation that makes no progress for 10 s prints what it waits for.
void run_to_completion(StreamingOperation &op, Transport &transport);

}  // namespace mpix::sparse::detail
