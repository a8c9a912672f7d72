// Where a user buffer lives. Host covers pageable and pinned host memory (the CPU reads it at memory
// speed); Device and Managed memory are reached through the device boundary (core/device_memory.h),
// never dereferenced by the CPU.
#pragma once

#include <cstdint>

namespace mpix::sparse::detail {

enum class MemoryKind : std::uint8_t { Host = 0, Device = 1, Managed = 2 };

inline const char *memory_kind_name(MemoryKind k) {
    switch (k) {
    case MemoryKind::Host: return "host";
    case MemoryKind::Device: return "device";
    case MemoryKind::Managed: return "managed";
    }
    return "?";
}

inline bool on_device(MemoryKind k) {
    return k != MemoryKind::Host;
}

}  // namespace mpix::sparse::detail
