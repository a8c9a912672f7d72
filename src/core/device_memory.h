// The one boundary between the algorithms and GPU memory. The algorithms never touch a device buffer
// themselves: they ask this interface to find its non-zero blocks, to bring those blocks (or the whole
// buffer, for the dense path) into pinned host staging, and to write a result held in staging back
// into the device buffer. Only non-zero blocks cross PCIe on the sparse paths.
//
// Backends: CUDA (src/cuda/, built with MPIX_SPARSE_CUDA and used when a device is present), and an
// emulated device in host memory that tests select with MPIX_SPARSE_TEST_DEVICE=emulated so that every
// path above the kernels runs in CI, where there is no GPU. Every call is synchronous for the host:
// it returns when its copies and kernels are complete.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/block_bitmap.h"
#include "core/block_layout.h"
#include "core/memory_kind.h"

namespace mpix::sparse::detail {

class DeviceMemory {
  public:
    virtual ~DeviceMemory() = default;

    virtual const char *name() const = 0;
    virtual MemoryKind classify(const void *p) const = 0;

    // Device memory (tests and benchmarks allocate through the backend they run on).
    virtual void *allocate_device(std::size_t bytes) = 0;
    virtual void free_device(void *p) noexcept = 0;
    // Host memory the device copies to and from at full speed (pinned).
    virtual void *allocate_staging(std::size_t bytes) = 0;
    virtual void free_staging(void *p) noexcept = 0;

    // Sets bit k of `bitmap` (already reset to layout.num_blocks() clear bits) for every block k of
    // the device vector `data` with a non-zero byte (the host scan's rule); returns their number.
    virtual std::uint64_t scan(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap) = 0;
    // Copies the blocks whose bits are set (`n` of them), back to back in ascending order, into host
    // `dst` (each block_bytes long but the vector's final partial block).
    virtual void download_blocks(const std::byte *data, const BlockLayout &layout, const BlockBitmap &bitmap,
                                 std::uint64_t n, std::byte *dst) = 0;
    virtual void download(const void *src, std::size_t bytes, void *dst) = 0;
    virtual void upload(const void *src, std::size_t bytes, void *dst) = 0;
    // Writes the whole device vector `out`: block blocks[i] from the host staging `src` at
    // i * block_bytes (blocks distinct, any order, each set in `present`), zeros in every block
    // whose bit in `present` is clear.
    virtual void write_blocks(std::byte *out, const BlockLayout &layout, const std::byte *src,
                              const std::uint64_t *blocks, std::uint64_t n, const BlockBitmap &present) = 0;
};

// The process's backend, made on first use (after a device buffer was seen): null when there is no
// device (no CUDA build, no driver, no GPU).
DeviceMemory *device_memory();

// The memory kind of p. Without a backend, a pointer the CUDA driver (when the process loaded one)
// reports as device memory is still recognised, so it gets an error instead of a CPU read.
MemoryKind classify_memory(const void *p);
// False when no buffer can be device memory now (no CUDA driver loaded, no emulation): every buffer
// of a call is then host memory, found with one look at the loaded objects instead of one a buffer.
bool device_memory_possible();

// Host staging that grows and is kept: no allocation once the largest size was seen.
class StagingBuffer {
  public:
    StagingBuffer() = default;
    ~StagingBuffer() { release(); }
    StagingBuffer(const StagingBuffer &) = delete;
    StagingBuffer &operator=(const StagingBuffer &) = delete;

    // At least `bytes` (contents not kept when it grows).
    std::byte *reserve(DeviceMemory &device, std::size_t bytes);
    std::byte *data() const { return data_; }
    std::size_t capacity() const { return capacity_; }

  private:
    void release() noexcept;

    DeviceMemory *device_ = nullptr;
    std::byte *data_ = nullptr;
    std::size_t capacity_ = 0;
};

}  // namespace mpix::sparse::detail
