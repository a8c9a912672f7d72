// A library built without CUDA, handed a device pointer (on a machine with a GPU): a clear argument
// error (MPIX_ERR_SPARSE_ARG, "built without CUDA support"), nothing read as host memory, and the
// next host call works. Exits 77 (skipped) where no device memory can be allocated.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "mpix_sparse/mpix_sparse.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int failed = 0;
    void *dev = nullptr;
    int have = cudaMalloc(&dev, 4096) == cudaSuccess ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (have == 0) {
        std::fprintf(stderr, "no CUDA device: skipped\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPIX_Sparse_allreduce(MPI_IN_PLACE, dev, 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int cls = 0, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    if (cls != MPIX_ERR_SPARSE_ARG || std::strstr(text, "without CUDA") == nullptr) {
        std::fprintf(stderr, "expected an argument error naming CUDA, got class %d: %s\n", cls, text);
        failed = 1;
    }
    std::vector<float> host(1024, 1.0f);
    if (MPIX_Sparse_allreduce(MPI_IN_PLACE, host.data(), 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        failed = 1;
    cudaFree(dev);
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed;
}
