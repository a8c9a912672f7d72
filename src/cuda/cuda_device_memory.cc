// The CUDA backend of the device boundary. One device per process (the one current when the first
// device buffer was seen); its own stream, created blocking, so that each call first waits for work
// queued on the legacy default stream, and each call returns only after its copies and kernels.
// Scratch on the device (flags, bitmap, block list, staging) grows and is kept: no cudaMalloc once
// the largest call was seen. Calls are serialized by a lock (the progress engine mostly does that).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "core/debug.h"
#include "core/device_backends.h"
#include "core/error.h"
#include "cuda/block_kernels.h"

namespace mpix::sparse::detail {
namespace {

void check(cudaError_t rc, const char *what) {
    if (rc != cudaSuccess)
        throw Error(ErrorId::DeviceFailure, std::string(what) + ": " + cudaGetErrorName(rc) + " (" +
                                                cudaGetErrorString(rc) + ")");
}

// Device memory that grows to the largest request and is kept.
class DeviceScratch {
  public:
    DeviceScratch() = default;
    ~DeviceScratch() {
        if (data_ != nullptr) cudaFree(data_);
    }
    DeviceScratch(const DeviceScratch &) = delete;
    DeviceScratch &operator=(const DeviceScratch &) = delete;

    template <class T = std::byte>
    T *reserve(std::size_t bytes) {
        if (bytes > capacity_) {
            if (data_ != nullptr) cudaFree(data_);
            data_ = nullptr;
            capacity_ = 0;
            check(cudaMalloc(&data_, bytes), "cudaMalloc of device scratch");
            capacity_ = bytes;
        }
        return static_cast<T *>(data_);
    }

  private:
    void *data_ = nullptr;
    std::size_t capacity_ = 0;
};

class CudaDeviceMemory final : public DeviceMemory {
  public:
    CudaDeviceMemory(int device, int sm_count, std::string name)
        : device_(device), sm_count_(sm_count), name_(std::move(name)) {
        check(cudaStreamCreate(&stream_), "cudaStreamCreate");
    }
    ~CudaDeviceMemory() override {
        // At process exit the driver may already be gone: errors here are ignored.
        cudaSetDevice(device_);
        cudaStreamDestroy(stream_);
    }

    const char *name() const override { return name_.c_str(); }

    MemoryKind classify(const void *p) const override {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            cudaGetLastError();  // an unknown pointer is host memory; clear the sticky error
            return MemoryKind::Host;
        }
        if (a.type == cudaMemoryTypeManaged) return MemoryKind::Managed;
        if (a.type != cudaMemoryTypeDevice) return MemoryKind::Host;
        if (a.device != device_)
            throw Error(ErrorId::DeviceFailure, "a buffer is on device " + std::to_string(a.device) +
                                                    ", but this process uses device " + std::to_string(device_));
        return MemoryKind::Device;
    }

    void *allocate_device(std::size_t bytes) override {
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        void *p = nullptr;
        check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
        return p;
    }
    void free_device(void *p) noexcept override {
        if (p != nullptr) cudaFree(p);
    }
    void *allocate_staging(std::size_t bytes) override {
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        void *p = nullptr;
        check(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable), "cudaHostAlloc of staging");
        return p;
    }
    void free_staging(void *p) noexcept override {
        if (p != nullptr) cudaFreeHost(p);
    }

    std::uint64_t scan(const std::byte *data, const BlockLayout &layout, BlockBitmap &bitmap) override {
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        const cuda::BlockGeometry g = geometry(layout);
        const std::uint64_t words = (g.num_blocks + 63) / 64;
        auto *flags = flags_.reserve<std::uint8_t>(g.num_blocks + 1);
        auto *bits = words_.reserve<std::uint64_t>((words + 1) * sizeof(std::uint64_t));
        check(cuda::launch_scan(data, g, flags, bits, sm_count_, stream_), "block scan kernel");
        check(cudaMemcpyAsync(bitmap.words(), bits, words * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream_),
              "copy of the block bitmap");
        synchronize();
        std::uint64_t n = 0;
        for (std::uint64_t i = 0; i < words; ++i)
            n += static_cast<std::uint64_t>(__builtin_popcountll(bitmap.words()[i]));
        return n;
    }

    void download_blocks(const std::byte *data, const BlockLayout &layout, const BlockBitmap &bitmap, std::uint64_t n,
                         std::byte *dst) override {
        if (n == 0) return;
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        const cuda::BlockGeometry g = geometry(layout);
        list_.clear();
        for (std::uint64_t k = bitmap.next_set(0, g.num_blocks); k < g.num_blocks; k = bitmap.next_set(k + 1, g.num_blocks))
            list_.push_back(k);
        if (list_.size() != n) throw Error(ErrorId::DeviceFailure, "block count differs from the bitmap");
        auto *blocks = list_dev_.reserve<std::uint64_t>(n * sizeof(std::uint64_t));
        auto *staged = stage_.reserve(n * g.block_bytes);
        check(cudaMemcpyAsync(blocks, list_.data(), n * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_),
              "copy of the block list");
        check(cuda::launch_gather(data, g, blocks, n, staged, sm_count_, stream_), "compaction kernel");
        const std::size_t bytes = (n - 1) * layout.block_bytes() + layout.bytes_of(list_.back());
        check(cudaMemcpyAsync(dst, staged, bytes, cudaMemcpyDeviceToHost, stream_), "copy of the non-zero blocks");
        synchronize();
    }

    void download(const void *src, std::size_t bytes, void *dst) override {
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "device to host copy");
        synchronize();
    }
    void upload(const void *src, std::size_t bytes, void *dst) override {
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "host to device copy");
        synchronize();
    }

    void write_blocks(std::byte *out, const BlockLayout &layout, const std::byte *src, const std::uint64_t *blocks,
                      std::uint64_t n, const BlockBitmap &present) override {
        std::lock_guard<std::mutex> guard(lock_);
        use_device();
        const cuda::BlockGeometry g = geometry(layout);
        const std::uint64_t words = (g.num_blocks + 63) / 64;
        auto *bits = words_.reserve<std::uint64_t>((words + 1) * sizeof(std::uint64_t));
        check(cudaMemcpyAsync(bits, present.words(), words * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_),
              "copy of the result bitmap");
        check(cuda::launch_zero_absent(out, g, bits, sm_count_, stream_), "zero-fill kernel");
        if (n > 0) {
            auto *list = list_dev_.reserve<std::uint64_t>(n * sizeof(std::uint64_t));
            auto *staged = stage_.reserve(n * g.block_bytes);
            check(cudaMemcpyAsync(list, blocks, n * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_),
                  "copy of the result block list");
            check(cudaMemcpyAsync(staged, src, n * g.block_bytes, cudaMemcpyHostToDevice, stream_),
                  "copy of the result blocks");
            check(cuda::launch_scatter(out, g, staged, list, n, sm_count_, stream_), "scatter kernel");
        }
        synchronize();
    }

  private:
    void use_device() { check(cudaSetDevice(device_), "cudaSetDevice"); }
    void synchronize() { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
    static cuda::BlockGeometry geometry(const BlockLayout &l) {
        return cuda::BlockGeometry{l.num_blocks(), l.block_bytes(), l.total_bytes()};
    }

    int device_;
    int sm_count_;
    std::string name_;
    cudaStream_t stream_ = nullptr;
    std::mutex lock_;
    DeviceScratch flags_, words_, list_dev_, stage_;
    std::vector<std::uint64_t> list_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_cuda_device_memory() {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0) {
        cudaGetLastError();
        if (debug_enabled())
            std::fprintf(stderr, "mpix_sparse: no usable CUDA device (%s): host memory only\n",
                         rc != cudaSuccess ? cudaGetErrorName(rc) : "no device");
        return nullptr;
    }
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return std::make_unique<CudaDeviceMemory>(device, prop.multiProcessorCount,
                                              "cuda (device " + std::to_string(device) + ": " + prop.name + ")");
}

}  // namespace mpix::sparse::detail
