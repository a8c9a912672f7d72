/* The README's minimal example: a gradient that is mostly zeros, summed over all ranks. Only the
 * non-zero blocks travel; the result equals MPI_Allreduce's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpix_sparse/mpix_sparse.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const MPI_Count n = 1 << 22; /* 4M floats, 16 MiB */
    float *grad = calloc((size_t)n, sizeof *grad);
    float *sum = malloc((size_t)n * sizeof *sum);
    for (MPI_Count i = rank * 4096; i < n; i += 100000)
        grad[i] = 1.0f; /* ~0.1% non-zero */

    int rc = MPIX_Sparse_allreduce(grad, sum, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

    MPIX_Sparse_stats stats;
    MPIX_Sparse_stats_get(MPI_COMM_WORLD, &stats);
    if (rank == 0)
        printf("rc=%d sum[0]=%g sent %lld of %lld bytes (algorithm %d)\n", rc, sum[0], (long long)stats.bytes_sent,
               (long long)(n * (MPI_Count)sizeof(float)), stats.last_algorithm);
    free(grad);
    free(sum);
    MPI_Finalize();
    return rc == MPI_SUCCESS ? 0 : 1;
}
