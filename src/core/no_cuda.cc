// Built without CUDA: no device backend.
#include "core/device_backends.h"

namespace mpix::sparse::detail {

std::unique_ptr<DeviceMemory> make_cuda_device_memory() {
    return nullptr;
}

}  // namespace mpix::sparse::detail
