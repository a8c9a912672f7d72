// MPIX_FLOAT16 / MPIX_BFLOAT16: the library's 16-bit float datatypes (core/half_types.h).
#include "core/library.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

extern "C" MPI_Datatype MPIX_Sparse_float16(void) {
    try {
        return Library::get().half_types().float16();
    } catch (...) {
        return MPI_DATATYPE_NULL;  // MPI not initialized (or finalized)
    }
}

extern "C" MPI_Datatype MPIX_Sparse_bfloat16(void) {
    try {
        return Library::get().half_types().bfloat16();
    } catch (...) {
        return MPI_DATATYPE_NULL;
    }
}
