// The device backends behind core/device_memory.h. Exactly one definition of
// make_cuda_device_memory is linked: src/cuda/ when built with CUDA, core/no_cuda.cc otherwise.
#pragma once

#include <memory>

#include "core/device_memory.h"

namespace mpix::sparse::detail {

// The CUDA backend, or null when the library was built without CUDA, the driver is missing, or the
// machine has no GPU (then every buffer is host memory, or an error when the driver says otherwise).
std::unique_ptr<DeviceMemory> make_cuda_device_memory();

// Device memory emulated in host memory: allocate_device hands out host memory that classify calls
// Device, and the boundary's operations run as host loops. Tests use it to run every path above the
// kernels without a GPU, and as the reference the CUDA kernels are compared with.
std::unique_ptr<DeviceMemory> make_emulated_device_memory();

// Asks the CUDA driver, if this process has loaded one (it cannot own device memory otherwise), what
// p is; Host when there is no driver. Needs no CUDA at build time.
MemoryKind probe_driver_memory_kind(const void *p);
// Whether this process has loaded a CUDA driver (one look at the loaded objects).
bool probe_driver_loaded();

}  // namespace mpix::sparse::detail
