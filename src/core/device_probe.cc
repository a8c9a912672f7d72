#include <dlfcn.h>

#include "core/device_backends.h"

namespace mpix::sparse::detail {
namespace {

// From the CUDA driver API (cuda.h), stable since CUDA 4; declared here so that no toolkit is needed.
using CuPointerGetAttribute = int (*)(void *data, int attribute, unsigned long long ptr);
constexpr int kAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE

MemoryKind ask_driver(CuPointerGetAttribute get, const void *p) {
    const auto address = reinterpret_cast<unsigned long long>(p);
    unsigned managed = 0;
    if (get(&managed, kAttributeIsManaged, address) == 0 && managed != 0) return MemoryKind::Managed;
    unsigned type = 0;
    // Memory the driver does not know (CUDA_ERROR_INVALID_VALUE) is ordinary host memory.
    if (get(&type, kAttributeMemoryType, address) == 0 && type == kMemoryTypeDevice) return MemoryKind::Device;
    return MemoryKind::Host;
}

}  // namespace

MemoryKind probe_driver_memory_kind(const void *p) {
    // RTLD_NOLOAD: only a driver the process already loaded. One that never loaded it has no device
    // memory, and loading it here would cost a driver initialisation on every host-only call.
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver == nullptr) return MemoryKind::Host;
    const auto get = reinterpret_cast<CuPointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
    const MemoryKind kind = get != nullptr ? ask_driver(get, p) : MemoryKind::Host;
    dlclose(driver);
    return kind;
}

}  // namespace mpix::sparse::detail
