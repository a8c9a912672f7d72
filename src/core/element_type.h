// The element types and reduction operations the sparse path can serve, and their mapping from MPI
// handles. The sparse path needs an operation whose identity is all-zero bytes: then a block of zero
// bytes contributes nothing and need not travel.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace mpix::sparse::detail {

// F16 and BF16: IEEE binary16 and bfloat16 (MPIX_FLOAT16, MPIX_BFLOAT16), summed in float.
enum class ElementType : std::uint8_t { F32 = 0, F64, I32, I64, U32, U64, F16, BF16, Count_ };
enum class ReduceOp : std::uint8_t { Sum = 0, Bor, Bxor, Lor, Lxor, Max, Count_ };

constexpr std::size_t element_size(ElementType t) {
    switch (t) {
    case ElementType::F32:
    case ElementType::I32:
    case ElementType::U32: return 4;
    case ElementType::F16:
    case ElementType::BF16: return 2;
    default: return 8;
    }
}

constexpr bool is_floating(ElementType t) {
    return t == ElementType::F32 || t == ElementType::F64 || t == ElementType::F16 || t == ElementType::BF16;
}
constexpr bool is_unsigned(ElementType t) {
    return t == ElementType::U32 || t == ElementType::U64;
}

// Whether (type, op) has all-zero bytes as its identity and a kernel here. Floating types: SUM only
// (+0.0 is the identity). Integers: SUM, BOR, BXOR, LOR, LXOR. Unsigned integers also MAX.
constexpr bool is_sparse_capable(ElementType t, ReduceOp op) {
    if (t == ElementType::Count_ || op == ReduceOp::Count_) return false;
    if (is_floating(t)) return op == ReduceOp::Sum;
    if (op == ReduceOp::Max) return is_unsigned(t);
    return true;
}

// Whether the type is one the sparse path knows (independent of the op).
std::optional<ElementType> element_type_of(MPI_Datatype datatype);
std::optional<ReduceOp> reduce_op_of(MPI_Op op);

const char *name_of(ElementType t);
const char *name_of(ReduceOp op);

}  // namespace mpix::sparse::detail
