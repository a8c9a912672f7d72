#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

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

// Whether the process has loaded the CUDA driver, from the dynamic linker's list of loaded objects:
// no system call. (dlopen with RTLD_NOLOAD searches the library path first: 100-150 us of open()
// calls on every MPIX_ call of a host-only program, measured as 130-190 us per call on a 128 KiB
// allreduce that MPI_Allreduce does in 60.) The list is walked again only after objects were loaded
// (dlpi_adds counts them), so a host-only program pays one callback per call.
bool driver_loaded() {
    static std::atomic<unsigned long long> checked_at{~0ull};  // dlpi_adds of the last full walk
    struct Walk {
        unsigned long long adds = 0;
        bool first = true, unchanged = false, found = false;
    } walk;
    dl_iterate_phdr(
        [](dl_phdr_info *info, std::size_t, void *data) {
            auto &w = *static_cast<Walk *>(data);
            if (w.first) {
                w.first = false;
                w.adds = info->dlpi_adds;
                w.unchanged = w.adds == checked_at.load(std::memory_order_relaxed);
                if (w.unchanged) return 1;
            }
            const char *slash = info->dlpi_name != nullptr ? std::strrchr(info->dlpi_name, '/') : nullptr;
            const char *name = slash != nullptr ? slash + 1 : info->dlpi_name;
            w.found = name != nullptr && std::strncmp(name, "libcuda.so", 10) == 0;
            return w.found ? 1 : 0;
        },
        &walk);
    if (walk.unchanged) return false;  // nothing loaded since a walk that found no driver
    if (!walk.found) checked_at.store(walk.adds, std::memory_order_relaxed);
    return walk.found;
}

// cuPointerGetAttribute once the driver is loaded (the handle is kept: the driver stays for the
// process's life); null before. A program may load CUDA after its first call, so "not loaded" is
// asked again each time, cheaply.
CuPointerGetAttribute driver_query() {
    static std::atomic<CuPointerGetAttribute> query{nullptr};
    CuPointerGetAttribute get = query.load(std::memory_order_acquire);
    if (get != nullptr || !driver_loaded()) return get;
    // RTLD_NOLOAD: only a driver the process already loaded; loading one here would cost a driver
    // initialisation in a host-only program.
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver == nullptr) return nullptr;
    get = reinterpret_cast<CuPointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
    if (get == nullptr) {
        dlclose(driver);
        return nullptr;
    }
    query.store(get, std::memory_order_release);
    return get;
}

}  // namespace

bool probe_driver_loaded() {
    return driver_query() != nullptr;
}

MemoryKind probe_driver_memory_kind(const void *p) {
    const CuPointerGetAttribute get = driver_query();
    return get != nullptr ? ask_driver(get, p) : MemoryKind::Host;
}

}  // namespace mpix::sparse::detail
