// MPIX_Sparse_get_version: the loaded library's version, from the header it was built with.
#include "mpix_sparse/mpix_sparse.h"

extern "C" int MPIX_Sparse_get_version(int *major, int *minor, int *patch) {
    if (major != nullptr) *major = MPIX_SPARSE_VERSION_MAJOR;
    if (minor != nullptr) *minor = MPIX_SPARSE_VERSION_MINOR;
    if (patch != nullptr) *patch = MPIX_SPARSE_VERSION_PATCH;
    return MPI_SUCCESS;
}
