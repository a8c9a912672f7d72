#include "core/device_memory.h"

#include <cstdio>
#include <memory>

#include "core/debug.h"
#include "core/device_backends.h"
#include "core/env_switch.h"

namespace mpix::sparse::detail {
namespace {

bool emulated_device() {
    static const bool emulated = env_is("MPIX_SPARSE_TEST_DEVICE", "emulated");
    return emulated;
}

std::unique_ptr<DeviceMemory> choose_backend() {
    std::unique_ptr<DeviceMemory> backend;
    if (emulated_device())
        backend = make_emulated_device_memory();
    else
        backend = make_cuda_device_memory();  // null without CUDA support or without a device
    if (debug_enabled())
        std::fprintf(stderr, "mpix_sparse: device buffers: %s\n",
                     backend ? backend->name() : "none (host memory only)");
    if (debug_enabled() && backend)
        std::fprintf(stderr, "mpix_sparse: device path: non-zero blocks staged through pinned host memory "
                             "(device memory is not handed to UCX)\n");
    return backend;
}

}  // namespace

DeviceMemory *device_memory() {
    static const std::unique_ptr<DeviceMemory> backend = choose_backend();
    return backend.get();
}

bool device_memory_possible() {
    return emulated_device() || probe_driver_loaded();
}

MemoryKind classify_memory(const void *p) {
    if (p == nullptr) return MemoryKind::Host;
    if (emulated_device()) return device_memory()->classify(p);
    // The driver's answer needs no backend: a host-only program never initialises CUDA here.
    const MemoryKind kind = probe_driver_memory_kind(p);
    if (kind == MemoryKind::Host) return kind;
    DeviceMemory *device = device_memory();
    return device != nullptr ? device->classify(p) : kind;
}

std::byte *StagingBuffer::reserve(DeviceMemory &device, std::size_t bytes) {
    if (bytes <= capacity_ && device_ == &device) return data_;
    release();
    data_ = static_cast<std::byte *>(device.allocate_staging(bytes == 0 ? 1 : bytes));
    device_ = &device;
    capacity_ = bytes;
    return data_;
}

void StagingBuffer::release() noexcept {
    if (data_ != nullptr) device_->free_staging(data_);
    data_ = nullptr;
    capacity_ = 0;
}

}  // namespace mpix::sparse::detail
