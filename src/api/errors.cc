// MPIX_Sparse_error_class: the registered MPI error class of each kind of library error.
#include "api/api_guard.h"
#include "mpix_sparse/mpix_sparse.h"

using namespace mpix::sparse::detail;

static_assert(static_cast<int>(ErrorKind::Count_) == MPIX_SPARSE_ERRKIND_COUNT_,
              "ErrorKind must mirror enum MPIX_Sparse_error_kind");

extern "C" int MPIX_Sparse_error_class(int kind) {
    if (kind < 0 || kind >= MPIX_SPARSE_ERRKIND_COUNT_) return MPI_ERR_ARG;
    try {
        Library::get();
        return mpi_error_class(static_cast<ErrorKind>(kind));
    } catch (...) {
        return MPI_ERR_OTHER;
    }
}
