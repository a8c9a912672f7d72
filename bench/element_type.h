// Element types the benchmark can reduce, and the one place that maps them to C++ and MPI types.
#ifndef MPIX_SPARSE_BENCH_ELEMENT_TYPE_H
#define MPIX_SPARSE_BENCH_ELEMENT_TYPE_H

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace bench {

enum class ElementType { Float, Double, Int };

inline const char *element_type_name(ElementType t) {
    switch (t) {
    case ElementType::Float: return "float";
    case ElementType::Double: return "double";
    case ElementType::Int: return "int";
    }
    return "?";
}

inline bool parse_element_type(const std::string &s, ElementType &out) {
    for (ElementType t : {ElementType::Float, ElementType::Double, ElementType::Int}) {
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
    }
    return MPI_DATATYPE_NULL;
}

inline std::size_t element_size(ElementType t) {
    switch (t) {
    case ElementType::Float: return sizeof(float);
    case ElementType::Double: return sizeof(double);
    case ElementType::Int: return sizeof(int);
    }
    return 0;
}

// Calls f(T{}) with T the C++ type of t, so typed loops are written once as templates.
template <class F>
decltype(auto) with_element_type(ElementType t, F &&f) {
    switch (t) {
    case ElementType::Double: return f(double{});
    case ElementType::Int: return f(int{});
    case ElementType::Float: break;
    }
    return f(float{});
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
