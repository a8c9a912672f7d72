// The memory one operation works in, borrowed from its communicator and given back when it ends, so
// that a steady stream of calls allocates nothing: the non-zero bitmap, the pair sort's buffers, and
// the stream's buffers, message records and window scratch, and pinned staging for device buffers. Sends the transport
// still holds (their acknowledgement not yet in) keep it aside until they complete.
#pragma once

#include <memory>
#include <vector>

#include "algo/device_staging.h"
#include "algo/stream_resources.h"
#include "core/block_bitmap.h"
#include "core/comm_state.h"
#include "core/operation.h"
#include "core/pair_sort.h"
#include "core/send_staging.h"

namespace mpix::sparse::detail {

struct OperationScratch final : Reusable {
    BlockBitmap bitmap;
    PairSortScratch pairs;
    StreamResources resources;
    DeviceStaging device;      // device buffers only
    SendStaging send_staging;  // the scan's copy of the blocks to send (core/send_staging.h)
    std::vector<int> send_staging_peers;
    // The shard this rank aggregated in its last stream, and the vector's blocks then: the scan's
    // guess of the blocks it will not send (kept unstaged) when the next vector is as long.
    std::uint64_t last_shard_vector = 0, last_shard_lo = 0, last_shard_hi = 0;

    bool settle() override { return resources.reap(); }
    void abandon() override { resources.abandon(); }
};

// A spare scratch of `state`, or a new one (the first calls, or several operations at once).
inline std::unique_ptr<OperationScratch> borrow_scratch(CommState &state) {
    std::unique_ptr<Reusable> spare = state.take_scratch();
    if (auto *s = dynamic_cast<OperationScratch *>(spare.get())) {
        (void)spare.release();
        return std::unique_ptr<OperationScratch>(s);
    }
    return std::make_unique<OperationScratch>();
}

}  // namespace mpix::sparse::detail
