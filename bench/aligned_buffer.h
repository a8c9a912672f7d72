// Page-aligned, pre-touched byte buffers, as OSU allocates them: alignment keeps copies and
// reductions on their fast paths, and touching every page up front keeps page faults out of the
// timed calls.
#ifndef MPIX_SPARSE_BENCH_ALIGNED_BUFFER_H
#define MPIX_SPARSE_BENCH_ALIGNED_BUFFER_H

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace bench {

class AlignedBuffer {
  public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(std::size_t bytes) { resize(bytes); }

    // Discards the contents; the new bytes are zero.
    void resize(std::size_t bytes) {
        constexpr std::size_t kAlignment = 4096;
        const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
        void *p = rounded ? std::aligned_alloc(kAlignment, rounded) : nullptr;
        if (rounded && !p) throw std::bad_alloc();
        if (p) std::memset(p, 0, rounded);
        data_.reset(static_cast<unsigned char *>(p));
        size_ = bytes;
    }

    unsigned char *data() { return data_.get(); }
    const unsigned char *data() const { return data_.get(); }
    std::size_t size() const { return size_; }

  private:
    struct Free {
        void operator()(unsigned char *p) const { std::free(p); }
    };
    std::unique_ptr<unsigned char, Free> data_;
    std::size_t size_ = 0;
};

}  // namespace bench

#endif
