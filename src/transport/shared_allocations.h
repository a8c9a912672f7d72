// Memory from MPIX_Sparse_alloc_mem: each allocation is a shared segment of its own, which the ranks
// of this machine map and read in place. A payload that lies in one is sent as a reference to where
// it is (nothing copied into the transport's segment), so an aggregator reduces a worker's blocks
// straight from the worker's buffer and a worker copies a result straight from the aggregator's
// output. Where segments cannot be made (no memfd, an unknown shared-memory domain), an allocation
// is ordinary memory and every payload travels as before; so is a small one (a descriptor and a
// mapping per allocation are not worth it for what would travel by UCX anyway) and one larger than
// a peer maps.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "transport/shared_segment.h"

namespace mpix::sparse::detail {

class SharedAllocations {
  public:
    // Allocations below this are ordinary memory.
    static constexpr std::size_t kSmallest = std::size_t{64} << 10;

    static SharedAllocations &get();

    // `bytes` of zeroed memory, 64-byte aligned (a shared segment where possible); null when out of
    // memory.
    void *allocate(std::size_t bytes);
    // Frees an allocation from allocate(); false (nothing freed) for any other pointer.
    bool release(void *base);
    // Where [p, p + bytes) is for a peer on this machine, when it lies inside one shared allocation.
    std::optional<SegmentRef> find(const void *p, std::size_t bytes) const;

  private:
    struct FreePlain {
        void operator()(void *p) const { std::free(p); }
    };
    struct Allocation {
        std::unique_ptr<SharedSegment> segment;  // null: ordinary memory (`plain`)
        std::unique_ptr<void, FreePlain> plain;
        void *base() const { return segment ? static_cast<void *>(segment->base()) : plain.get(); }
    };
    SharedAllocations() = default;

    mutable std::mutex lock_;
    std::vector<Allocation> allocations_;
    std::atomic<std::size_t> segments_{0};  // lets find() answer without the lock when there are none
};

}  // namespace mpix::sparse::detail
