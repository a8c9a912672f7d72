#include "algo/buffer_pool.h"

#include <algorithm>

namespace mpix::sparse::detail {

BufferPool::Buffer BufferPool::acquire(std::size_t bytes) {
    // Smallest idle buffer that fits; pools stay small (a window of messages per peer).
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->capacity >= bytes && (best == free_.end() || it->capacity < best->capacity)) best = it;
    if (best != free_.end()) {
        Buffer b = std::move(*best);
        *best = std::move(free_.back());
        free_.pop_back();
        return b;
    }
    const std::size_t capacity = std::max<std::size_t>(bytes, 64);
    auto *storage = static_cast<std::byte *>(::operator new[](capacity + kDataOffset, std::align_val_t{4096}));
    return Buffer{std::unique_ptr<std::byte[], Buffer::Free>(storage), capacity};
}

void BufferPool::release(Buffer &&buffer) {
    if (free_.capacity() == 0) free_.reserve(64);  // the list itself: not one allocation per new high-water mark
    if (buffer.storage) free_.push_back(std::move(buffer));
}

}  // namespace mpix::sparse::detail
