// Reusable staging buffers (packed messages, rendezvous receives). Buffers are kept across calls, so
// a steady stream of same-sized calls allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace mpix::sparse::detail {

class BufferPool {
  public:
    // Where a buffer's data starts inside its page-aligned storage: cache-line aligned, half a page
    // and a line past the page start. Received blocks are reduced from these buffers into user
    // buffers, which are usually page-aligned or 16 bytes past a page (large mallocs); a buffer at
    // nearly the same offset within a page as the data it is combined with makes loads wait for
    // the stores before them (4K aliasing): measured 70-85 ms instead of 50 ms for 64 MiB at 100%
    // on 4 ranks when the buffers came from malloc at 16 bytes past a page.
    static constexpr std::size_t kDataOffset = 2048 + 64;

    struct Buffer {
        struct Free {
            void operator()(std::byte *p) const { ::operator delete[](p, std::align_val_t{4096}); }
        };
        std::unique_ptr<std::byte[], Free> storage;
        std::size_t capacity = 0;
        std::byte *data() const { return storage ? storage.get() + kDataOffset : nullptr; }
    };

    // A buffer of at least `bytes` bytes, 64-byte aligned.
    Buffer acquire(std::size_t bytes);
    void release(Buffer &&buffer);
    std::size_t idle() const { return free_.size(); }

  private:
    std::vector<Buffer> free_;
};

}  // namespace mpix::sparse::detail
