/* Several sparse communicators left alive into MPI_Finalize, whose handle values sort differently on
 * different ranks (odd ranks give communicator memory back to the allocator later, so that their last
 * communicator takes it). The library must release them in an order every rank agrees on: run by
 * tests/mpi/finalize_order.sh, which compares the order each rank reports (MPIX_SPARSE_DEBUG=1) and
 * checks that the handle orders did differ. */
#include <mpi.h>
#include <mpix_sparse/mpix_sparse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kComms = 5, kSpare = 8, kCount = 1 << 18 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Local communicators, created first (low addresses) and freed at once on even ranks, before the
     * last sparse communicator on odd ranks: there the last one takes their memory and sorts first,
     * on even ranks the first one does. (Freeing them in opposite orders at once depended on what
     * else the library allocates: one more vector made the orders equal.) */
    MPI_Comm spare[kSpare];
    for (int i = 0; i < kSpare; ++i)
        MPI_Comm_dup(MPI_COMM_SELF, &spare[i]);
    if (rank % 2 == 0)
        for (int i = 0; i < kSpare; ++i)
            MPI_Comm_free(&spare[i]);

    MPI_Comm comms[kComms];
    float *in = calloc(kCount, sizeof(float)), *out = calloc(kCount, sizeof(float));
    for (int i = 0; i < kCount; i += 997)
        in[i] = (float)(rank + 1);
    for (int c = 0; c < kComms; ++c) {
        if (rank % 2 == 1 && c == kComms - 1)
            for (int i = 0; i < kSpare; ++i)
                MPI_Comm_free(&spare[i]);
        if (MPIX_Sparse_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &comms[c]) != MPI_SUCCESS) return 1;
        if (MPIX_Sparse_allreduce(in, out, kCount, MPI_FLOAT, MPI_SUM, comms[c]) != MPI_SUCCESS) return 1;
    }
    /* Each rank's order of handle values, as a permutation; do they differ between ranks? */
    int perm[kComms];
    for (int c = 0; c < kComms; ++c) {
        perm[c] = 0;
        for (int d = 0; d < kComms; ++d)
            if ((uintptr_t)comms[d] < (uintptr_t)comms[c]) ++perm[c];
    }
    int lo[kComms], hi[kComms];
    MPI_Allreduce(perm, lo, kComms, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(perm, hi, kComms, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int differ = 0;
    for (int c = 0; c < kComms; ++c)
        differ |= lo[c] != hi[c];
    if (rank == 0) printf("handle orders differ between ranks: %s\n", differ ? "yes" : "no");
    free(in);
    free(out);
    MPI_Finalize(); /* the sparse communicators are still alive here */
    return 0;
}
