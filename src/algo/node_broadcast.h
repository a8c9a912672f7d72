// The last step of hierarchical reduction, non-blocking: the node leader's result to the other ranks
// of its node. When the result's non-zero blocks are few, only they travel (packed, with their block
// numbers) and the other ranks write zeros around them in one pass; else, or when the leader's
// reduction was dense, the whole buffer goes with MPI_Ibcast. A leader whose reduction failed
// broadcasts that instead, so its node fails with it rather than wait. A device buffer is scanned and
// packed on the device and staged through host memory (`device` non-null).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "algo/buffer_pool.h"
#include "algo/device_staging.h"
#include "algo/mpi_requests.h"
#include "core/block_bitmap.h"
#include "core/block_layout.h"
#include "core/operation.h"

namespace mpix::sparse::detail {

class NodeBroadcast {
  public:
    // Collective over `comm` (the node; rank 0 is the leader, holding the result in buf).
    NodeBroadcast(MPI_Comm comm, void *buf, const BlockLayout &layout, MPI_Datatype datatype, BufferPool &pool,
                  BlockBitmap &bitmap, DeviceMemory *device, DeviceStaging &staging);
    ~NodeBroadcast();
    NodeBroadcast(const NodeBroadcast &) = delete;
    NodeBroadcast &operator=(const NodeBroadcast &) = delete;

    // The leader says whether its result came from a dense reduction, or whether it failed.
    void start(bool dense, bool failed);
    bool progress();
    bool done() const { return stage_ == Stage::Done; }
    // A non-leader: the leader failed, or its broadcast was malformed.
    const OpError &error() const { return error_; }
    // Bytes each non-leader received (for the statistics).
    std::uint64_t bytes() const { return bytes_; }

  private:
    enum class Stage { Idle, Header, Payload, Done };
    void start_payload();
    void finish_payload();
    template <class Copy>
    void device_copy(Copy copy);
    // The host memory the whole buffer is broadcast from or into.
    std::byte *dense_host();

    MPI_Comm comm_;
    bool leader_;
    std::byte *buf_;
    BlockLayout layout_;
    MPI_Datatype datatype_;
    BufferPool &pool_;
    BlockBitmap &bitmap_;
    DeviceMemory *device_;  // null: buf is host memory
    DeviceStaging &staging_;
    MpiRequests mpi_;
    Stage stage_ = Stage::Idle;
    std::uint64_t n_ = 0;  // the header: blocks that follow packed, or a marker
    BufferPool::Buffer packed_;
    std::uint64_t bytes_ = 0;
    OpError error_;
};

}  // namespace mpix::sparse::detail
