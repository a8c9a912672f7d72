#include "transport/shared_allocations.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mpix::sparse::detail {

SharedAllocations &SharedAllocations::get() {
    // Never destroyed: memory a user has not freed stays valid until the process ends.
    static SharedAllocations *const instance = new SharedAllocations;
    return *instance;
}

void *SharedAllocations::allocate(std::size_t bytes) {
    Allocation a;
    // A fresh segment reads as zeros, as calloc'd memory does.
    if (bytes >= kSmallest) a.segment = SharedSegment::create_whole(bytes);
    if (!a.segment) {
        constexpr std::size_t kAlign = 64;
        const std::size_t rounded = (std::max(bytes, std::size_t{1}) + kAlign - 1) / kAlign * kAlign;
        a.plain.reset(std::aligned_alloc(kAlign, rounded));
        if (!a.plain) return nullptr;
        std::memset(a.plain.get(), 0, rounded);
    }
    void *base = a.base();
    const bool shared = a.segment != nullptr;
    std::lock_guard<std::mutex> guard(lock_);
    allocations_.push_back(std::move(a));  // if it throws, `a` still owns (and frees) the memory
    if (shared) segments_.fetch_add(1, std::memory_order_relaxed);
    return base;
}

bool SharedAllocations::release(void *base) {
    Allocation gone;
    {
        std::lock_guard<std::mutex> guard(lock_);
        auto it = std::find_if(allocations_.begin(), allocations_.end(),
                               [base](const Allocation &a) { return a.base() == base; });
        if (it == allocations_.end()) return false;
        gone = std::move(*it);
        allocations_.erase(it);
        if (gone.segment) segments_.fetch_sub(1, std::memory_order_relaxed);
    }
    // Peers may map the segment until they learn it is gone: its pages go back now, not then.
    if (gone.segment) gone.segment->release_pages();
    return true;  // `gone` unmaps and closes its segment, or frees its memory
}

std::optional<SegmentRef> SharedAllocations::find(const void *p, std::size_t bytes) const {
    if (segments_.load(std::memory_order_relaxed) == 0) return std::nullopt;
    std::lock_guard<std::mutex> guard(lock_);
    for (const Allocation &a : allocations_)
        if (a.segment && a.segment->contains(p, bytes)) return a.segment->ref(p, bytes);
    return std::nullopt;
}

}  // namespace mpix::sparse::detail
