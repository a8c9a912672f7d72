#include "api/arguments.h"

#include <cstdint>
#include <limits>

#include "core/device_memory.h"
#include "core/element_type.h"
#include "core/error.h"
#include "core/half_types.h"

namespace mpix::sparse::detail {

void check_type_and_op(MPI_Datatype datatype, MPI_Op op, MPI_Count *size, MPI_Count *extent) {
    if (datatype == MPI_DATATYPE_NULL) fail(ErrorId::NullDatatype);
    if (op == MPI_OP_NULL) fail(ErrorId::NullOp);
    MPI_Count lb = 0;
    if (MPI_Type_size_x(datatype, size) != MPI_SUCCESS || *size == MPI_UNDEFINED || *size < 0 ||
        MPI_Type_get_extent_x(datatype, &lb, extent) != MPI_SUCCESS)
        fail(ErrorId::UnsupportedDatatype);
}

void check_reduction_arguments(const void *sendbuf, const void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Op op) {
    if (count < 0) fail(ErrorId::NegativeCount);
    MPI_Count size = 0, extent = 0;
    // The types the library reduces itself are named and contiguous (its 16-bit floats are derived
    // types to MPI, named types to users): no need to ask MPI, which cost a small call a tenth of
    // the library's overhead.
    const auto type = element_type_of(datatype);
    if (type) {
        if (op == MPI_OP_NULL) fail(ErrorId::NullOp);
        size = extent = static_cast<MPI_Count>(element_size(*type));
    } else {
        check_type_and_op(datatype, op, &size, &extent);
    }
    if (count == 0) return;
    bool predefined = true;
    if (!type) {
        int named = 0, ints = 0, addresses = 0, types = 0;
        MPI_Type_get_envelope(datatype, &ints, &addresses, &types, &named);
        predefined = named == MPI_COMBINER_NAMED;
    }
    if (unsupported_half_op(datatype, op)) fail(ErrorId::HalfFloatOp);
    if (recvbuf == MPI_IN_PLACE || (predefined && (recvbuf == nullptr || sendbuf == nullptr)))
        fail(ErrorId::NullBuffer);
    if (extent > 0 &&
        static_cast<std::uint64_t>(count) >
            static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max()) / static_cast<std::uint64_t>(extent))
        fail(ErrorId::CountTooLarge);
    if (predefined && sendbuf != MPI_IN_PLACE && size == extent) {
        const auto s = reinterpret_cast<std::uintptr_t>(sendbuf);
        const auto r = reinterpret_cast<std::uintptr_t>(recvbuf);
        const auto bytes = static_cast<std::uintptr_t>(count) * static_cast<std::uintptr_t>(size);
        if (s < r + bytes && r < s + bytes) fail(ErrorId::AliasedBuffers);
    }
}

MemoryKind memory_kind_of(const void *buffer, MPI_Datatype datatype) {
    if (buffer == MPI_IN_PLACE) return MemoryKind::Host;
    const MemoryKind kind = classify_memory(buffer);
    if (kind == MemoryKind::Host) return kind;
    if (device_memory() == nullptr) fail(ErrorId::DeviceUnsupported);
    MPI_Count size = 0, lb = 0, extent = 0;
    MPI_Type_size_x(datatype, &size);
    MPI_Type_get_extent_x(datatype, &lb, &extent);
    if (lb != 0 || size != extent) fail(ErrorId::DeviceDatatype);
    return kind;
}

}  // namespace mpix::sparse::detail
