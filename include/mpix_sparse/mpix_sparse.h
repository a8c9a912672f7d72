/**
 * @file
 * mpix_sparse: sparse collectives for MPI programs.
 *
 * MPIX_Sparse_allreduce has the contract of MPI_Allreduce on dense buffers, but blocks whose bytes are
 * all zero never travel: each rank streams only its non-zero blocks to aggregator ranks, which reduce
 * them and stream the union back (after OmniReduce, SIGCOMM'21). Calls whose type or operation lies
 * outside the sparse path, or whose data is too small or too dense to profit, are served by
 * MPI_Allreduce on the same communicator, so every call is correct.
 *
 * Conventions follow MPI: every function returns MPI_SUCCESS or an MPI error code whose class was
 * registered with MPI_Add_error_class (see MPIX_Sparse_error_class) and whose text MPI_Error_string
 * returns; errors are raised through the communicator's error handler first.
 *
 * Thread safety: any thread may call (with MPI_THREAD_MULTIPLE, several at once, on different
 * communicators); the library locks only briefly and never across a wait on other ranks. As with MPI
 * collectives, calls on one communicator (blocking, non-blocking or persistent starts) must be made
 * in the same order on every rank, and by one thread at a time.
 *
 * GPU buffers: every buffer argument may be CUDA device (or managed) memory when the library was built
 * with CUDA (MPIX_SPARSE_CUDA, on by default where the toolkit is found) and the process has a GPU;
 * ranks may mix host and device buffers. Only non-zero blocks cross PCIe: they are found and packed
 * on the device, staged through pinned host memory, and the union is written back on the device. A
 * call waits for work already queued on the legacy default stream before it reads (work on other
 * streams must be complete, e.g. cudaStreamSynchronize) and returns, like MPI_Allreduce, with the
 * output complete on the device. Device buffers need a datatype that is contiguous from offset 0.
 * One device per process: the one current when the library first meets a device buffer. Built
 * without CUDA, or without a usable device, a device pointer is an MPIX_ERR_SPARSE_ARG error.
 */
#ifndef MPIX_SPARSE_H
#define MPIX_SPARSE_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @cond INTERNAL */
/* Symbols of the shared library are hidden unless marked. */
#if defined(MPIX_SPARSE_BUILDING) && defined(__GNUC__)
#define MPIX_SPARSE_API __attribute__((visibility("default")))
#else
#define MPIX_SPARSE_API
#endif
/** @endcond */

#define MPIX_SPARSE_VERSION_MAJOR 0 /**< incompatible API changes */
#define MPIX_SPARSE_VERSION_MINOR 2 /**< compatible additions */
#define MPIX_SPARSE_VERSION_PATCH 0 /**< fixes */
/** One number for preprocessor tests: 10000 * major + 100 * minor + patch. */
#define MPIX_SPARSE_VERSION                                                                                            \
    (MPIX_SPARSE_VERSION_MAJOR * 10000 + MPIX_SPARSE_VERSION_MINOR * 100 + MPIX_SPARSE_VERSION_PATCH)

/** The version of the library actually loaded (which may differ from the header compiled against).
 * Any argument may be NULL. Callable before MPI_Init and after MPI_Finalize. */
MPIX_SPARSE_API int MPIX_Sparse_get_version(int *major, int *minor, int *patch);

/** @name Block-sparse allreduce
 * @{ */

/** Same contract as MPI_Allreduce on dense buffers (MPI_IN_PLACE allowed); blocks whose bytes are all
 * zero on a rank are not sent. Collective over comm. 64-bit count. */
MPIX_SPARSE_API int MPIX_Sparse_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm);

/** @} */

/** @name Non-blocking and persistent block-sparse allreduce
 *
 * Semantics follow MPI's: buffers must not be touched while a request is active; a completed
 * non-blocking request is freed and set to MPIX_SPARSE_REQUEST_NULL; a persistent request becomes
 * inactive and can be started again. Starts on one communicator (MPIX_Sparse_iallreduce,
 * MPIX_Sparse_start, and the blocking calls) must come in the same order on every rank. Operations
 * on one communicator run one after another in that order; operations on different communicators
 * run independently. They advance inside MPIX_Sparse_test/wait/waitall, inside any other
 * MPIX_Sparse_* call, and on a progress thread when one runs:
 * ~~~
 *   mpix_sparse_progress_thread  (MPIX_SPARSE_PROGRESS_THREAD)  auto | on | off; auto (a thread when
 *                                the MPI provides MPI_THREAD_MULTIPLE; it sleeps while nothing is in
 *                                flight). Read from the environment, or from the info of
 *                                MPIX_Sparse_comm_create / MPIX_Sparse_allreduce_init.
 * ~~~
 * A blocking MPIX_Sparse_allreduce is a non-blocking one waited on, except that its dense path is
 * MPI's blocking MPI_Allreduce (faster than MPI_Iallreduce in Open MPI): sparse results are bitwise
 * identical; dense float sums are MPI_Allreduce's, which MPI may order differently from its
 * MPI_Iallreduce. During that MPI_Allreduce, operations on other communicators advance only on a
 * progress thread (as during any blocking MPI call). With mpix_sparse_timeout set, the dense path
 * stays non-blocking so that a stalled peer still ends the call with an error.
 * @{ */
/** A non-blocking or persistent operation (opaque handle). */
typedef struct MPIX_Sparse_request_s *MPIX_Sparse_request;
/** The null request: what completed non-blocking requests are set to. */
#define MPIX_SPARSE_REQUEST_NULL ((MPIX_Sparse_request)0)

/** Starts a block-sparse allreduce (same arguments as MPIX_Sparse_allreduce). Argument errors are
 * raised here, and no request is made (*request = MPIX_SPARSE_REQUEST_NULL). Unlike MPI's
 * non-blocking starts, the first call on a communicator is collective over it: it sets up the
 * communicator's state (as MPIX_Sparse_allreduce_init and MPIX_Sparse_comm_create do), so it must
 * not wait behind anything a peer does only after its own first call. */
MPIX_SPARSE_API int MPIX_Sparse_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                           MPI_Op op, MPI_Comm comm, MPIX_Sparse_request *request);
/** A persistent, inactive request (MPI-4's MPI_Allreduce_init): arguments are checked and the
 * communicator's state is set up once; each MPIX_Sparse_start only scans and reduces. Collective
 * over comm on first use of comm. info may be MPI_INFO_NULL. */
MPIX_SPARSE_API int MPIX_Sparse_allreduce_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                               MPIX_Sparse_request *request);
/** Starts an inactive persistent request (the same order on every rank, like a collective call). */
MPIX_SPARSE_API int MPIX_Sparse_start(MPIX_Sparse_request *request);
/** *flag = 1 when the request completed (or is MPIX_SPARSE_REQUEST_NULL or inactive); its error, if
 * any, is returned then. */
MPIX_SPARSE_API int MPIX_Sparse_test(MPIX_Sparse_request *request, int *flag);
/** Completes the request (see MPIX_Sparse_test for what happens to it) and returns its error, if any. */
MPIX_SPARSE_API int MPIX_Sparse_wait(MPIX_Sparse_request *request);
/** Completes every request (null ones are skipped); returns the first error met, after completing the
 * others. */
MPIX_SPARSE_API int MPIX_Sparse_waitall(int n, MPIX_Sparse_request requests[]);
/** Frees an inactive persistent request (an active request is an error: wait for it first). Sets
 * *request to MPIX_SPARSE_REQUEST_NULL. Freeing a communicator (MPI_Comm_free or
 * MPIX_Sparse_comm_free) waits for its operations in flight; its requests stay valid handles to
 * test, wait on and free, but a persistent one can no longer be started (MPIX_ERR_SPARSE_COMM). */
MPIX_SPARSE_API int MPIX_Sparse_request_free(MPIX_Sparse_request *request);

/** @} */

/** @name Configured communicators and aggregator ranks
 *
 * MPI_Info keys (the environment variable in parentheses sets the default for communicators that
 * did not get the key, including those used directly without MPIX_Sparse_comm_create):
 * ~~~
 *   mpix_sparse_block_size        (MPIX_SPARSE_BLOCK_SIZE)        elements per block, 1..1048576; 256
 *   mpix_sparse_aggregators       (MPIX_SPARSE_AGGREGATORS)       number of aggregator ranks; default
 *                                                                 all ranks (colocated) or 1 (dedicated)
 *   mpix_sparse_aggregator_mode   (MPIX_SPARSE_AGGREGATOR_MODE)   colocated | dedicated; colocated
 *   mpix_sparse_algorithm         (MPIX_SPARSE_ALGORITHM)         auto | aggregator | allgather | dense;
 *                                                                 auto
 *   mpix_sparse_placement         (MPIX_SPARSE_PLACEMENT)         spread | packed; spread (one
 *                                                                 aggregator per node first)
 *   mpix_sparse_hierarchical      (MPIX_SPARSE_HIERARCHICAL)      auto | on | off; auto (reduce inside
 *                                                                 each node before crossing nodes: auto
 *                                                                 only with node multicast off)
 *   mpix_sparse_node_multicast    (MPIX_SPARSE_NODE_MULTICAST)    on | off; on (an aggregator sends its
 *                                                                 results once to each other node, where
 *                                                                 a worker forwards them to the others
 *                                                                 through shared memory)
 *   mpix_sparse_tune              (MPIX_SPARSE_TUNE)              auto | on | off; auto (on across nodes:
 *                                                                 blocking calls measure the algorithms
 *                                                                 the cost model finds close, and later
 *                                                                 calls of that size and density run the
 *                                                                 fastest; alike on every rank)
 *   mpix_sparse_dense_below       (MPIX_SPARSE_DENSE_BELOW)       bytes below which the dense path is
 *                                                                 always taken; 131072
 *   mpix_sparse_timeout           (MPIX_SPARSE_TIMEOUT)           seconds an operation may wait without
 *                                                                 progress before MPIX_ERR_SPARSE_TIMEOUT;
 *                                                                 0 (none: MPI semantics). Waiting in one
 *                                                                 MPI collective (a dense or allgather
 *                                                                 call; a hierarchical call's other
 *                                                                 level) shows no progress until it ends:
 *                                                                 set it above the longest such call
 *   mpix_sparse_profile           (MPIX_SPARSE_PROFILE)           on | off; off (time each phase:
 *                                                                 MPIX_Sparse_profile_get)
 * ~~~
 * A peer process found gone fails the waiting call with MPIX_ERR_SPARSE_TRANSPORT without a timeout
 * (except inside a blocking call's dense MPI_Allreduce, where MPI's own fault handling applies).
 * After either error the communicator is broken: later calls on it return the same class at once,
 * freeing it does not wait, other communicators keep working.
 * A value that does not parse is an error naming the key, never a silent default.
 * Every setting must be the same on all ranks of the communicator, except mpix_sparse_progress_thread,
 * _profile, _node_multicast (off on any rank turns it off), the timeout's length and
 * MPIX_SPARSE_SHARED_MEMORY_BYTES: ranks set apart make the communicator's creation (or first call,
 * for one not made by MPIX_Sparse_comm_create) fail on every rank with MPIX_ERR_SPARSE_INFO.
 * @{ */

/** Carve aggregator ranks out of comm (collective). Colocated mode: every rank gets *newcomm (a new
 * communicator over all ranks, configured). Dedicated mode: the chosen aggregator ranks hold no data;
 * they serve inside this call and return only after every worker has called MPIX_Sparse_comm_free on
 * its *newcomm; they return MPI_SUCCESS with *newcomm = MPI_COMM_NULL. Worker ranks get *newcomm over
 * the workers only. */
MPIX_SPARSE_API int MPIX_Sparse_comm_create(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
/** Frees a communicator from MPIX_Sparse_comm_create (collective over its ranks; waits for its
 * operations in flight) and sets *comm to MPI_COMM_NULL. */
MPIX_SPARSE_API int MPIX_Sparse_comm_free(MPI_Comm *comm);

/** @} */

/** @name Memory that peers read in place
 * On one machine every payload normally crosses shared memory as a copy: a worker's blocks are
 * copied into memory its aggregator can read, and an aggregator's result into memory its workers
 * can read. Memory from MPIX_Sparse_alloc_mem is a shared segment that the other ranks of the
 * machine map, so a send or receive buffer in it is read where it is: aggregators reduce the
 * workers' blocks straight from their send buffers, and workers copy results straight from the
 * aggregators' receive buffers (MPIX_Sparse_stats_in_place counts what went that way). Any
 * part of an allocation may be passed, with any call, algorithm or communicator; results are the
 * same as with other memory. A buffer must not be written while an operation that reads it is in
 * flight (the MPI rule already), and must not be freed until the operations using it completed.
 * Same shape as MPI_Alloc_mem / MPI_Free_mem. Errors go to MPI_COMM_WORLD's error handler; before
 * MPI_Init (allowed) or after MPI_Finalize they return MPI_ERR_OTHER and call no handler. From
 * 64 KiB an allocation is a memfd segment of its own: one file descriptor and one mapping here,
 * one mapping in each peer that reads it per communicator, so prefer a few large allocations to
 * many small ones. Smaller allocations, larger than 64 GiB ones, and all of them where the machine
 * offers no shared segments are ordinary memory, whose payloads are copied as before. The memory is
 * MAP_SHARED: after fork() parent and child share it. Like malloc on Linux, a large allocation
 * succeeds before its pages exist; the system may run out of them on first touch.
 * @{ */

/** Allocates size bytes (0 is allowed), zeroed and 64-byte aligned (page-aligned from 64 KiB);
 * *(void **)baseptr receives their address. info is accepted and ignored (MPI_INFO_NULL is fine).
 * MPIX_ERR_SPARSE_ARG for a negative size or a NULL baseptr; MPIX_ERR_SPARSE_INTERN when out of
 * memory. Nothing is written to baseptr on error. */
MPIX_SPARSE_API int MPIX_Sparse_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
/** Frees memory from MPIX_Sparse_alloc_mem (NULL: nothing happens). MPIX_ERR_SPARSE_ARG for any
 * other pointer, which is left alone. Its pages go back to the system at once; peers drop their
 * mapping of it at the next operation after an allocation that reuses its descriptor reaches
 * them, or when the communicator is freed. */
MPIX_SPARSE_API int MPIX_Sparse_free_mem(void *base);

/** @} */

/** @name Statistics
 * @{ */

/** Counters of this rank on comm, for users, benchmarks and tests. */
typedef struct MPIX_Sparse_stats {
    MPI_Count calls;           /**< collective calls on this communicator */
    MPI_Count bytes_sent;      /**< payload + header bytes this rank handed to the transport */
    MPI_Count bytes_received;  /**< likewise received */
    MPI_Count dense_fallbacks; /**< calls served by the dense path */
    int last_algorithm;        /**< MPIX_SPARSE_ALGORITHM_* of the last call */
} MPIX_Sparse_stats;
#define MPIX_SPARSE_ALGORITHM_DENSE 0      /**< MPI_Allreduce on the whole buffer */
#define MPIX_SPARSE_ALGORITHM_AGGREGATOR 1 /**< non-zero blocks streamed to aggregator ranks */
#define MPIX_SPARSE_ALGORITHM_ALLGATHER 2  /**< every rank gathers every rank's non-zero blocks */
/** Copies this rank's counters on comm into *stats (local; not collective). */
MPIX_SPARSE_API int MPIX_Sparse_stats_get(MPI_Comm comm, MPIX_Sparse_stats *stats);
/** *bytes: of this rank's bytes_sent on comm, the payload bytes that peers on this machine read in
 * place in its buffers (memory from MPIX_Sparse_alloc_mem), each payload counted once however many
 * peers read it (local; reset with the other counters). A function of its own so that
 * MPIX_Sparse_stats keeps its layout. */
MPIX_SPARSE_API int MPIX_Sparse_stats_in_place(MPI_Comm comm, MPI_Count *bytes);
/** Sets this rank's counters and profile on comm to zero (local). */
MPIX_SPARSE_API int MPIX_Sparse_stats_reset(MPI_Comm comm);

/** Where this rank's time went on comm: wall-clock seconds spent in each phase of its calls, summed
 * over the calls profiled. Collected only while profiling is on: info key mpix_sparse_profile
 * (MPIX_SPARSE_PROFILE) = on | off; off by default (then every field stays 0). Phases are timed at
 * their boundaries (a few clock reads per message). stream includes reduce and result_write;
 * allgather includes reduce. */
typedef struct MPIX_Sparse_profile {
    MPI_Count calls;       /**< calls profiled */
    double scan;           /**< finding the non-zero blocks (element variant: sorting the pairs) */
    double agreement;      /**< the collective that agrees on arguments, counts and the plan */
    double dense;          /**< the dense path (MPI_Allreduce) */
    double allgather;      /**< the allgather path, including its reduction */
    double stream;         /**< the aggregators' stream, including reduce and result_write */
    double reduce;         /**< aggregators reducing contributions */
    double result_write;   /**< writing the output: results and the zeros between them */
    double barrier;        /**< the barrier that ends a streamed call */
    double node_broadcast; /**< hierarchical calls: a node leader broadcasting the result to its node */
} MPIX_Sparse_profile;
/** Copies this rank's profile on comm into *profile (local; not collective). */
MPIX_SPARSE_API int MPIX_Sparse_profile_get(MPI_Comm comm, MPIX_Sparse_profile *profile);

/** @} */

/** @name 16-bit floating point: MPIX_FLOAT16 and MPIX_BFLOAT16
 *
 * MPI (3.1, and Open MPI 4.1) has no 16-bit float types, so the library defines two: IEEE binary16
 * and bfloat16, each a committed 2-byte datatype named "MPIX_FLOAT16" / "MPIX_BFLOAT16". Pass them
 * as the datatype of any call here, with buffers of 16-bit values (e.g. _Float16, __half,
 * __nv_bfloat16, torch.float16/bfloat16 storage). MPI_SUM takes the sparse path, accumulating in
 * float and rounding once to the 16-bit type at the end: every rank gets the same result, within
 * half an ulp of the float sum (the sum of n values in float is itself off by at most about
 * (n-1) * 2^-24 of the sum of their magnitudes). A hierarchical reduction (mpix_sparse_hierarchical)
 * rounds each node's sum too, before the node leaders add them. MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN on the dense
 * path use MPI_Allreduce with an op of the library that computes each combination in float and
 * rounds it (one rounding per combination, in MPI's order; a NaN result is the canonical quiet NaN
 * and MAX/MIN take NaN over numbers and +0 over -0 (MIN: -0), so every rank gets the same bits). Other ops are MPIX_ERR_SPARSE_ARG
 * errors. The types are made on first use (MPI must be initialized; before, and after
 * MPI_Finalize, these return MPI_DATATYPE_NULL) and freed by MPI_Finalize; MPI's own calls can send
 * them (they are plain bytes to MPI) but cannot reduce them.
 * @{ */
/** IEEE 754 binary16. */
MPIX_SPARSE_API MPI_Datatype MPIX_Sparse_float16(void);
/** bfloat16: the upper half of an IEEE binary32. */
MPIX_SPARSE_API MPI_Datatype MPIX_Sparse_bfloat16(void);
#define MPIX_FLOAT16 MPIX_Sparse_float16()   /**< the library's IEEE binary16 datatype */
#define MPIX_BFLOAT16 MPIX_Sparse_bfloat16() /**< the library's bfloat16 datatype */
/** @} */

/** @name Element-sparse allreduce: (index, value) pairs
 * @{ */

/** Each rank contributes nnz pairs of a vector of length count: indices in [0, count), any order,
 * duplicates combined with op. recvbuf receives the dense result (count elements) on every rank. */
MPIX_SPARSE_API int MPIX_Sparse_allreduce_elements(MPI_Count nnz, const int64_t *indices, const void *values,
                                                   void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                                   MPI_Comm comm);

typedef struct MPIX_Sparse_vector_s *MPIX_Sparse_vector; /**< a sparse result (opaque handle) */
/** Same input; the result stays sparse: sorted unique indices with their reduced values, owned by the
 * library until MPIX_Sparse_vector_free. */
MPIX_SPARSE_API int MPIX_Sparse_allreduce_elements_sparse(MPI_Count nnz, const int64_t *indices, const void *values,
                                                          MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                                          MPI_Comm comm, MPIX_Sparse_vector *result);
/** The result's pairs: *nnz entries at *indices and *values (the datatype of the call), valid until
 * MPIX_Sparse_vector_free. */
MPIX_SPARSE_API int MPIX_Sparse_vector_get(MPIX_Sparse_vector v, MPI_Count *nnz, const int64_t **indices,
                                           const void **values);
/** Releases a sparse result and sets *v to NULL. */
MPIX_SPARSE_API int MPIX_Sparse_vector_free(MPIX_Sparse_vector *v);

/** @} */

/** @name Error classes
 *
 * The library registers these classes with MPI_Add_error_class on first use; MPIX_Sparse_error_class
 * returns the class of one kind (registering them if needed; MPI must be initialized), so that
 * ~~~
 *     MPI_Error_class(code, &cls); if (cls == MPIX_ERR_SPARSE_ARG) ...
 * ~~~
 * works. Each error code carries its own message for MPI_Error_string.
 * @{ */
/** The kinds of error the library raises, each its own MPI error class. */
enum MPIX_Sparse_error_kind {
    MPIX_SPARSE_ERRKIND_ARG = 0,   /* invalid argument: count, buffer, datatype, op, index, pointer */
    MPIX_SPARSE_ERRKIND_COMM,      /* invalid communicator */
    MPIX_SPARSE_ERRKIND_INFO,      /* invalid configuration value (MPI_Info key or environment) */
    MPIX_SPARSE_ERRKIND_REMOTE,    /* another rank failed, or ranks passed inconsistent arguments */
    MPIX_SPARSE_ERRKIND_TRANSPORT, /* the UCX transport failed */
    MPIX_SPARSE_ERRKIND_PROTOCOL,  /* a malformed message arrived from a peer */
    MPIX_SPARSE_ERRKIND_INTERN,    /* an MPI call failed inside the library, or out of memory */
    MPIX_SPARSE_ERRKIND_TIMEOUT,   /* no progress within mpix_sparse_timeout: a peer stalled or left */
    MPIX_SPARSE_ERRKIND_COUNT_
};
/** The MPI error class of one MPIX_Sparse_error_kind. */
MPIX_SPARSE_API int MPIX_Sparse_error_class(int kind);
#define MPIX_ERR_SPARSE_ARG MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG)   /**< invalid argument */
#define MPIX_ERR_SPARSE_COMM MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_COMM) /**< invalid communicator */
#define MPIX_ERR_SPARSE_INFO MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_INFO) /**< invalid configuration value */
#define MPIX_ERR_SPARSE_REMOTE                                                                                         \
    MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_REMOTE) /**< another rank failed or disagreed */
#define MPIX_ERR_SPARSE_TRANSPORT                                                                                      \
    MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_TRANSPORT) /**< UCX transport failure or a peer process gone */
#define MPIX_ERR_SPARSE_PROTOCOL                                                                                       \
    MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_PROTOCOL) /**< malformed message from a peer */
#define MPIX_ERR_SPARSE_INTERN                                                                                         \
    MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_INTERN) /**< MPI call failed inside the library, or out of memory */
#define MPIX_ERR_SPARSE_TIMEOUT                                                                                        \
    MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_TIMEOUT) /**< no progress within mpix_sparse_timeout */

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MPIX_SPARSE_H */
