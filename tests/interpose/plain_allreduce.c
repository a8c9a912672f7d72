/* An ordinary MPI program that knows nothing of mpix_sparse: MPI_Allreduce of a mostly-zero vector,
 * ten times, then rank 0 prints a checksum of the result. tests/interpose/interpose.sh runs it with
 * and without the interposer. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = 1 << 22; /* 16 MiB of floats */
    float *grad = calloc((size_t)n, sizeof *grad);
    float *sum = malloc((size_t)n * sizeof *sum);
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (int step = 0; step < 10; ++step) {
        for (int i = 0; i < n; ++i)
            grad[i] = 0.0f;
        for (int i = (rank * 7919 + step * 104729) % 25600; i < n; i += 25600) /* 1% of the 256-float blocks */
            grad[i] = (float)(rank + step + 1);
        MPI_Allreduce(grad, sum, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        const unsigned char *b = (const unsigned char *)sum;
        for (size_t i = 0; i < (size_t)n * sizeof *sum; ++i)
            h = (h ^ b[i]) * 1099511628211ull;
    }
    if (rank == 0) printf("checksum %016llx\n", (unsigned long long)h);
    free(grad);
    free(sum);
    MPI_Finalize();
    return 0;
}
