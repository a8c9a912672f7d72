#include "core/element_type.h"

#include <climits>

#include "core/half_types.h"

namespace mpix::sparse::detail {
namespace {

// Integer MPI types map by their width in this ABI; the static_asserts keep the mapping honest.
static_assert(sizeof(int) == 4 && sizeof(unsigned) == 4, "MPI_INT/MPI_UNSIGNED must be 32-bit");
static_assert(sizeof(long long) == 8, "MPI_LONG_LONG must be 64-bit");

ElementType long_type(bool is_unsigned_long) {
    if constexpr (sizeof(long) == 8)
        return is_unsigned_long ? ElementType::U64 : ElementType::I64;
    else
        return is_unsigned_long ? ElementType::U32 : ElementType::I32;
}

// Fortran's types (from the Fortran binding, or C code passing them): their widths are the MPI's
// Fortran compiler's, so they are asked of MPI. An MPI without Fortran may define them as null.
std::optional<ElementType> fortran_type_of(MPI_Datatype datatype) {
    const bool real =
        datatype == MPI_REAL || datatype == MPI_DOUBLE_PRECISION || datatype == MPI_REAL4 || datatype == MPI_REAL8;
    const bool integer = datatype == MPI_INTEGER || datatype == MPI_INTEGER4 || datatype == MPI_INTEGER8;
    int size = 0;
    if ((!real && !integer) || MPI_Type_size(datatype, &size) != MPI_SUCCESS) return std::nullopt;
    if (size == 4) return real ? ElementType::F32 : ElementType::I32;
    if (size == 8) return real ? ElementType::F64 : ElementType::I64;
    return std::nullopt;
}

}  // namespace

std::optional<ElementType> element_type_of(MPI_Datatype datatype) {
    if (datatype == MPI_DATATYPE_NULL) return std::nullopt;
    if (datatype == MPI_FLOAT) return ElementType::F32;
    if (datatype == MPI_DOUBLE) return ElementType::F64;
    if (datatype == MPI_INT || datatype == MPI_INT32_T) return ElementType::I32;
    if (datatype == MPI_INT64_T || datatype == MPI_LONG_LONG || datatype == MPI_LONG_LONG_INT) return ElementType::I64;
    if (datatype == MPI_LONG) return long_type(false);
    if (datatype == MPI_UNSIGNED || datatype == MPI_UINT32_T) return ElementType::U32;
    if (datatype == MPI_UINT64_T || datatype == MPI_UNSIGNED_LONG_LONG) return ElementType::U64;
    if (datatype == MPI_UNSIGNED_LONG) return long_type(true);
    if (auto half = half_type_of(datatype)) return half;
    return fortran_type_of(datatype);
}

std::optional<ReduceOp> reduce_op_of(MPI_Op op) {
    if (op == MPI_SUM) return ReduceOp::Sum;
    if (op == MPI_BOR) return ReduceOp::Bor;
    if (op == MPI_BXOR) return ReduceOp::Bxor;
    if (op == MPI_LOR) return ReduceOp::Lor;
    if (op == MPI_LXOR) return ReduceOp::Lxor;
    if (op == MPI_MAX) return ReduceOp::Max;
    return std::nullopt;
}

const char *name_of(ElementType t) {
    switch (t) {
    case ElementType::F32: return "float32";
    case ElementType::F64: return "float64";
    case ElementType::I32: return "int32";
    case ElementType::I64: return "int64";
    case ElementType::U32: return "uint32";
    case ElementType::U64: return "uint64";
    case ElementType::F16: return "float16";
    case ElementType::BF16: return "bfloat16";
    default: return "invalid";
    }
}

const char *name_of(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Bor: return "bor";
    case ReduceOp::Bxor: return "bxor";
    case ReduceOp::Lor: return "lor";
    case ReduceOp::Lxor: return "lxor";
    case ReduceOp::Max: return "max";
    default: return "invalid";
    }
}

}  // namespace mpix::sparse::detail
