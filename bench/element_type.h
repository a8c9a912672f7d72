// Element types the benchmark can reduce, and the one place that maps them to C++ and MPI types.
#ifndef MPIX_SPARSE_BENCH_ELEMENT_TYPE_H
#define MPIX_SPARSE_BENCH_ELEMENT_TYPE_H

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/half_float.h"  // header-only conversions, the same the library rounds with
#include "mpix_sparse/mpix_sparse.h"

namespace bench {

enum class ElementType { Float, Double, Int, Float16, BFloat16 };

// A 16-bit float element (IEEE binary16, or bfloat16 when Brain), stored as its bits; arithmetic
// goes through float and rounds once per operation, as a training framework's fp16 sum does.
template <bool Brain>
struct Float16Value {
    std::uint16_t bits;  // trivial, so buffers of them may be memset and memcpy'd
    Float16Value() = default;
    template <class U>
    explicit Float16Value(U v) : bits(from_float(static_cast<float>(v))) {}
    explicit operator double() const { return to_float(bits); }
    Float16Value &operator+=(Float16Value o) {
        bits = from_float(to_float(bits) + to_float(o.bits));
        return *this;
    }
    static float to_float(std::uint16_t b) {
        return Brain ? mpix::sparse::detail::bfloat16_to_float(b) : mpix::sparse::detail::half_to_float(b);
    }
    static std::uint16_t from_float(float f) {
        return Brain ? mpix::sparse::detail::float_to_bfloat16(f) : mpix::sparse::detail::float_to_half(f);
    }
};
using Half = Float16Value<false>;
using BFloat16 = Float16Value<true>;
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit elements are their bits");

inline const char *element_type_name(ElementType t) {
    switch (t) {
    case ElementType::Float: return "float";
    case ElementType::Double: return "double";
    case ElementType::Int: return "int";
    case ElementType::Float16: return "float16";
    case ElementType::BFloat16: return "bfloat16";
    }
    return "?";
}

inline bool parse_element_type(const std::string &s, ElementType &out) {
    for (ElementType t :
         {ElementType::Float, ElementType::Double, ElementType::Int, ElementType::Float16, ElementType::BFloat16}) {
        if (s == element_type_name(t)) {
            out = t;
            return true;
        }
    }
    return false;
}

inline MPI_Datatype element_mpi_type(ElementType t) {
    switch (t) {
    case ElementType::Float: return MPI_FLOAT;
    case ElementType::Double: return MPI_DOUBLE;
    case ElementType::Int: return MPI_INT;
    case ElementType::Float16: return MPIX_FLOAT16;
    case ElementType::BFloat16: return MPIX_BFLOAT16;
    }
    return MPI_DATATYPE_NULL;
}

inline std::size_t element_size(ElementType t) {
    switch (t) {
    case ElementType::Float: return sizeof(float);
    case ElementType::Double: return sizeof(double);
    case ElementType::Int: return sizeof(int);
    case ElementType::Float16:
    case ElementType::BFloat16: return 2;
    }
    return 0;
}

// Calls f(T{}) with T the C++ type of t, so typed loops are written once as templates.
template <class F>
decltype(auto) with_element_type(ElementType t, F &&f) {
    switch (t) {
    case ElementType::Double: return f(double{});
    case ElementType::Int: return f(int{});
    case ElementType::Float16: return f(Half{});
    case ElementType::BFloat16: return f(BFloat16{});
    case ElementType::Float: break;
    }
    return f(float{});
}

// The op the baselines give MPI_Allreduce: MPI_SUM, or for the 16-bit types (which MPI cannot
// reduce) a user op that adds in float and rounds per addition, as Horovod's fp16 sum does. Inputs
// are small integers, so every summation order gives the same bits and results compare bitwise.
template <class V>
void sum_16bit(void *in, void *inout, int *len, MPI_Datatype *) {
    const auto *a = static_cast<const V *>(in);
    auto *b = static_cast<V *>(inout);
    for (int i = 0; i < *len; ++i)
        b[i] += a[i];
}

inline MPI_Op commutative_op(MPI_User_function *f) {
    MPI_Op op = MPI_OP_NULL;
    MPI_Op_create(f, 1, &op);
    return op;
}

inline MPI_Op baseline_sum_op(ElementType t) {
    // Created on first use (after MPI_Init) and left to MPI_Finalize.
    if (t == ElementType::Float16) {
        static const MPI_Op half = commutative_op(&sum_16bit<Half>);
        return half;
    }
    if (t == ElementType::BFloat16) {
        static const MPI_Op brain = commutative_op(&sum_16bit<BFloat16>);
        return brain;
    }
    return MPI_SUM;
}

// The element at index i of a typed buffer, as a double, for messages.
inline double element_as_double(ElementType t, const void *buf, std::size_t i) {
    return with_element_type(t, [&](auto zero) {
        decltype(zero) v;
        std::memcpy(&v, static_cast<const unsigned char *>(buf) + i * sizeof v, sizeof v);
        return static_cast<double>(v);
    });
}

}  // namespace bench

#endif
