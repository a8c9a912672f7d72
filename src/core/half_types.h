// MPIX_FLOAT16 and MPIX_BFLOAT16. MPI 3.1 has no 16-bit float types (Open MPI 4.1 none, MPICH only
// as an extension), so the library defines its own: committed 2-byte contiguous types with names,
// and, for the dense path (MPI cannot reduce them), MPI ops that compute in float. The sparse path
// accumulates them in float and rounds once (core/reduce_kernels.h). Created with the library (MPI
// initialized), freed at MPI_Finalize.
#pragma once

#include <mpi.h>

#include <optional>

#include "core/element_type.h"

namespace mpix::sparse::detail {

class HalfTypes {
  public:
    HalfTypes();  // registers itself for half_type_of / dense_op_for
    ~HalfTypes();
    HalfTypes(const HalfTypes &) = delete;
    HalfTypes &operator=(const HalfTypes &) = delete;

    MPI_Datatype float16() const { return types_[0]; }
    MPI_Datatype bfloat16() const { return types_[1]; }

  private:
    friend MPI_Op dense_op_for(MPI_Datatype datatype, MPI_Op op);
    friend std::optional<ElementType> half_type_of(MPI_Datatype datatype);
    MPI_Datatype types_[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_Op ops_[2][4] = {};  // per type: SUM, PROD, MAX, MIN
};

// F16 or BF16 when datatype is one of the library's 16-bit float types (no MPI call).
std::optional<ElementType> half_type_of(MPI_Datatype datatype);
// Whether datatype is one of the library's 16-bit float types and op one the library cannot reduce
// it with (only SUM, PROD, MAX and MIN have its ops): an argument error.
bool unsupported_half_op(MPI_Datatype datatype, MPI_Op op);
// The op the dense path passes to MPI: for a 16-bit float type, the library's float-computing op
// (each combination rounds once); otherwise op itself.
MPI_Op dense_op_for(MPI_Datatype datatype, MPI_Op op);

}  // namespace mpix::sparse::detail
