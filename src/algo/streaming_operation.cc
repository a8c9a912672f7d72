#include "algo/streaming_operation.h"

#include <chrono>
#include <cstdlib>
#include <iostream>

namespace mpix::sparse::detail {

StreamingOperation::StreamingOperation(const StreamSpec &spec, Transport &transport, StreamResources &resources,
                                       OpCounters &counters, const ContributionSource *source, ResultSink *sink)
    : spec_(spec), transport_(transport) {
    if (spec.my_worker >= 0) worker_.emplace(spec, transport, resources, counters, *source, *sink);
    if (spec.my_aggregator >= 0)
        aggregator_.emplace(spec, spec.shard_lo(spec.my_aggregator), spec.shard_hi(spec.my_aggregator), transport,
                            resources, counters, spec.my_worker >= 0 ? source : nullptr,
                            spec.my_worker >= 0 ? sink : nullptr, worker_ ? &*worker_ : nullptr);
}

void StreamingOperation::on_message(InboundMessage &&message) {
    const WireHeader &h = message.header;
    const bool matches = h.context == spec_.context && h.seq == spec_.seq && h.count == spec_.layout.count &&
                         h.block_elems == spec_.layout.block_elems &&
                         h.elem_type == static_cast<std::uint8_t>(spec_.type) &&
                         h.reduce_op == static_cast<std::uint8_t>(spec_.op) &&
                         h.num_workers == static_cast<std::uint32_t>(spec_.workers());
    if (matches && h.kind == MessageKind::Contribution && aggregator_) {
        aggregator_->on_contribution(std::move(message));
    } else if (matches && h.kind == MessageKind::Result && worker_) {
        worker_->on_result(std::move(message));
    } else {
        if (error_.empty()) error_ = "message does not match the operation (different arguments on some rank?)";
        transport_.release(message);
    }
}

bool StreamingOperation::advance() {
    bool progressed = false;
    if (worker_) progressed |= worker_->advance();
    if (aggregator_) progressed |= aggregator_->advance();
    return progressed;
}

bool StreamingOperation::done() const {
    if (!error_.empty()) return true;
    return (!worker_ || worker_->done()) && (!aggregator_ || aggregator_->done());
}

std::string StreamingOperation::error() const {
    if (!error_.empty()) return error_;
    if (worker_ && !worker_->error().empty()) return worker_->error();
    if (aggregator_ && !aggregator_->error().empty()) return aggregator_->error();
    return {};
}

std::string StreamingOperation::describe() const {
    std::string s = "operation " + std::to_string(spec_.seq) + ": ";
    if (worker_) s += worker_->describe() + " ";
    if (aggregator_) s += aggregator_->describe();
    return s;
}

void run_to_completion(StreamingOperation &op, Transport &transport) {
    static const bool debug = [] {
        const char *v = std::getenv("MPIX_SPARSE_DEBUG");
        return v != nullptr && *v != '\0' && *v != '0';
    }();
    auto last_progress = std::chrono::steady_clock::now();
    while (!op.done()) {
        bool progressed = transport.progress();
        progressed |= op.advance();
        if (progressed) {
            if (debug) last_progress = std::chrono::steady_clock::now();
            continue;
        }
        transport.wait();
        if (debug && std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10)) {
            std::cerr << "mpix_sparse: stalled " << op.describe() << std::endl;
            last_progress = std::chrono::steady_clock::now();
        }
    }
}

}  // namespace mpix::sparse::detail
