// Reusable staging buffers (packed messages, rendezvous receives). Buffers are kept across calls, so
// a steady stream of same-sized calls allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace mpix::sparse::detail {

class BufferPool {
  public:
    struct Buffer {
        std::unique_ptr<std::byte[]> bytes;
        std::size_t capacity = 0;
        std::byte *data() const { return bytes.get(); }
    };

    // A buffer of at least `bytes` bytes, 16-byte aligned (new[] of std::byte guarantees the
    // fundamental alignment).
    Buffer acquire(std::size_t bytes);
    void release(Buffer &&buffer);
    std::size_t idle() const { return free_.size(); }

  private:
    std::vector<Buffer> free_;
};

}  // namespace mpix::sparse::detail
