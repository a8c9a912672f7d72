// MPIX_Sparse_allreduce: MPIX_Sparse_iallreduce, waited on.
#include "mpix_sparse/mpix_sparse.h"

extern "C" int MPIX_Sparse_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm) {
    // A non-blocking call waited on: one code path, bitwise identical results. Argument errors are
    // raised by MPIX_Sparse_iallreduce (through comm's handler), the call's outcome by the wait.
    MPIX_Sparse_request request = MPIX_SPARSE_REQUEST_NULL;
    const int rc = MPIX_Sparse_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &request);
    if (rc != MPI_SUCCESS) return rc;
    return MPIX_Sparse_wait(&request);
}
