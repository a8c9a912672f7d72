// Device memory emulated in host memory (see core/device_backends.h). The loops here are the
// reference the CUDA kernels are tested against: they define what each boundary operation does.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include "core/block_scan.h"
#include "core/device_backends.h"

namespace mpix::sparse::detail {
namespace {

class EmulatedDeviceMemory final : public DeviceMemory {
  public:
    const char *name() const override { return "emulated (host memory posing as device memory; tests only)"; }

    MemoryKind classify(const void *p) const override {
        std::lock_guard<std::mutex> guard(lock_);
        const auto *b = static_cast<const std::byte *>(p);
        auto it = allocations_.upper_bound(b);
        if (it == allocations_.begin()) return MemoryKind::Host;
        --it;
        return b < it->first + it->second ? MemoryKind::Device : MemoryKind::Host;
    }

    void *allocate_device(std::size_t bytes) override {
        void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
        if (p == nullptr) throw std::bad_alloc();
        std::lock_guard<std::mutex> guard(lock_);
        allocations_[static_cast<std::byte *>(p)] = bytes + 1;  // a zero-byte allocation is still device memory
        return p;
    }
    void free_device(void *p) noexcept override {
        if (p == nullptr) return;
        {
            std::lock_guard<std::mutex> guard(lock_);
            allocations_.erase(static_cast<std::byte *>(p));
        }
        std::free(p);
    }
    void *allocate_staging(std::size_t bytes) override {
        void *p = std::malloc(bytes);
        if (p == nullptr) throw std::bad_alloc();
        return p;
    }
    void free_staging(void *p) noexcept override { std::free(p); }

    std::uint64_t scan(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap) override {
        return scan_blocks(data, layout, bitmap);
    }
    void download_blocks(const std::byte *data, const BlockLayout &layout, const BlockBitmap &bitmap, std::uint64_t,
                         std::byte *dst) override {
        const std::uint64_t blocks = layout.num_blocks();
        for (std::uint64_t k = bitmap.next_set(0, blocks); k < blocks;) {
            const std::uint64_t end = bitmap.next_clear(k, blocks);
            const std::size_t bytes = layout.run_bytes(k, end - k);
            std::memcpy(dst, data + layout.offset_of(k), bytes);
            dst += bytes;
            k = bitmap.next_set(end, blocks);
        }
    }
    void download(const void *src, std::size_t bytes, void *dst) override { std::memcpy(dst, src, bytes); }
    void upload(const void *src, std::size_t bytes, void *dst) override { std::memcpy(dst, src, bytes); }
    void write_blocks(std::byte *out, const BlockLayout &layout, const std::byte *src, const std::uint64_t *blocks,
                      std::uint64_t n, const BlockBitmap &present) override {
        const std::uint64_t total = layout.num_blocks();
        for (std::uint64_t k = present.next_clear(0, total); k < total;) {
            const std::uint64_t end = present.next_set(k, total);
            std::memset(out + layout.offset_of(k), 0, layout.run_bytes(k, end - k));
            k = present.next_clear(end, total);
        }
        for (std::uint64_t i = 0; i < n; ++i)
            std::memcpy(out + layout.offset_of(blocks[i]), src + i * layout.block_bytes(), layout.bytes_of(blocks[i]));
    }

  private:
    mutable std::mutex lock_;
    std::map<const std::byte *, std::size_t> allocations_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_emulated_device_memory() {
    return std::make_unique<EmulatedDeviceMemory>();
}

}  // namespace mpix::sparse::detail
