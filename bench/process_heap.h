// How the process's C library heap treats freed large blocks, for --keep-heap.
#ifndef MPIX_SPARSE_BENCH_PROCESS_HEAP_H
#define MPIX_SPARSE_BENCH_PROCESS_HEAP_H

namespace bench {

// Makes malloc keep freed blocks of up to 1 GiB in the heap instead of giving them back to the kernel
// (glibc: M_MMAP_THRESHOLD and M_TRIM_THRESHOLD). Why the bench offers it: from 32 MiB messages on,
// Open MPI 4.1's MPI_Allreduce mallocs a temporary buffer of half the message per call, which glibc
// maps fresh and unmaps on free, so each of its pages faults on first touch in every call (4097
// faults per call at 32 MiB). A fault costs far more on some virtual machines than on bare metal.
// Returns false where the C library has no such control.
bool keep_freed_blocks_in_heap();

}  // namespace bench

#endif
