// Page-aligned, pre-touched byte buffers, as OSU allocates them: alignment keeps copies and
// reductions on their fast paths, and touching every page up front keeps page faults out of the
// timed calls. From the heap, or (--alloc-mem) from MPIX_Sparse_alloc_mem, which the other ranks of
// the machine read in place.
#ifndef MPIX_SPARSE_BENCH_ALIGNED_BUFFER_H
#define MPIX_SPARSE_BENCH_ALIGNED_BUFFER_H

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <mpix_sparse/mpix_sparse.h>

namespace bench {

// Frees what AlignedBuffer allocated, the way it was allocated.
struct AlignedBufferFree {
    bool alloc_mem = false;
    void operator()(unsigned char *p) const {
        if (alloc_mem)
            MPIX_Sparse_free_mem(p);
        else
            std::free(p);
    }
};

class AlignedBuffer {
  public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(std::size_t bytes) { resize(bytes); }

    // Later resize() calls allocate with MPIX_Sparse_alloc_mem (from 64 KiB a segment of its own,
    // page-aligned; 64-byte aligned below).
    void use_alloc_mem(bool on) { alloc_mem_ = on; }

    // Discards the contents; the new bytes are zero.
    void resize(std::size_t bytes) {
        constexpr std::size_t kAlignment = 4096;
        const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
        data_.reset();
        void *p = nullptr;
        if (rounded && alloc_mem_) {
            if (MPIX_Sparse_alloc_mem(static_cast<MPI_Aint>(rounded), MPI_INFO_NULL, &p) != MPI_SUCCESS) p = nullptr;
        } else if (rounded) {
            p = std::aligned_alloc(kAlignment, rounded);
        }
        if (rounded && !p) throw std::bad_alloc();
        if (p) std::memset(p, 0, rounded);
        data_ = std::unique_ptr<unsigned char, AlignedBufferFree>(static_cast<unsigned char *>(p),
                                                                  AlignedBufferFree{alloc_mem_});
        size_ = bytes;
    }

    unsigned char *data() { return data_.get(); }
    const unsigned char *data() const { return data_.get(); }
    std::size_t size() const { return size_; }

  private:
    std::unique_ptr<unsigned char, AlignedBufferFree> data_;
    std::size_t size_ = 0;
    bool alloc_mem_ = false;
};

}  // namespace bench

#endif
