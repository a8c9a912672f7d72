/* The C half of the Fortran 2008 binding (mpix_sparse_f08.f90): Fortran handles (MPI_Fint) become C
 * handles, array descriptors (ISO_Fortran_binding.h) become addresses, and MPI_IN_PLACE as Fortran
 * sees it becomes C's. Only mpix_sparse_f08.f90 calls these functions; they are not exported. */
#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include <mpix_sparse/mpix_sparse.h>

#define F08_GLUE __attribute__((visibility("hidden")))

/* Counts cross from Fortran as c_int64_t (MPI_COUNT_KIND: the module checks). */
_Static_assert(sizeof(MPI_Count) >= sizeof(int64_t), "MPI_Count must hold a 64-bit count");

/* Error codes of the library's argument class with Fortran-specific messages, registered once. */
enum { kNonContiguous, kTooSmall, kCodes };
static int g_codes[kCodes];
static void register_codes(void) {
    static const char *const messages[kCodes] = {
        "MPIX_Sparse (Fortran): buffer is not contiguous (pass a contiguous array or copy)",
        "MPIX_Sparse (Fortran): buffer is smaller than count elements of the datatype (or nnz values)"};
    const int arg_class = MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG);
    for (int i = 0; i < kCodes; ++i) {
        g_codes[i] = arg_class;
        if (MPI_Add_error_code(arg_class, &g_codes[i]) != MPI_SUCCESS)
            g_codes[i] = arg_class;
        else
            MPI_Add_error_string(g_codes[i], messages[i]);
    }
}

/* Raised like the C API's errors: through the communicator's handler first, then returned. */
static int raise_error(MPI_Comm comm, int which) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_codes);
    MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, g_codes[which]);
    return g_codes[which];
}

/* Elements the descriptor holds, or -1 when unknown: a scalar (a(1) too, MPI's idiom for "from here
 * on") or an assumed-size array (its last extent is -1). */
static CFI_index_t known_elements(const CFI_cdesc_t *a) {
    if (a->rank == 0) return -1;
    CFI_index_t elements = 1;
    for (int d = 0; d < a->rank; ++d) {
        if (a->dim[d].extent < 0) return -1;
        elements *= a->dim[d].extent;
    }
    return elements;
}

/* Whether the C API may read the buffer as count elements from its first: scalars, contiguous arrays
 * (assumed-size ones included), and arrays of at most one element, whatever their stride (gfortran's
 * CFI_is_contiguous says no to a(3:3:2)). */
static int is_contiguous(const CFI_cdesc_t *a) {
    if (a->rank == 0 || CFI_is_contiguous(a)) return 1;
    const CFI_index_t elements = known_elements(a);
    return elements >= 0 && elements <= 1;
}

/* Whether an array whose size is known holds `count` elements of `datatype` (MPI leaves this to the
 * caller; the descriptor lets the binding check it). A bad datatype is left to the C API's checks. */
static int holds(const CFI_cdesc_t *a, int64_t count, MPI_Datatype datatype) {
    const CFI_index_t elements = known_elements(a);
    int size = 0;
    if (elements < 0 || count <= 0 || datatype == MPI_DATATYPE_NULL || MPI_Type_size(datatype, &size) != MPI_SUCCESS)
        return 1;
    return (double)elements * (double)a->elem_len >= (double)count * (double)size;
}

/* The address C gets for a buffer: C's MPI_IN_PLACE for mpi_f08's (in_place is its address), which
 * the C API accepts as sendbuf and rejects elsewhere, so it is never written through. */
static void *address_of(const CFI_cdesc_t *a, const void *in_place) {
    return a->base_addr == in_place ? MPI_IN_PLACE : a->base_addr;
}

/* The binding's own checks of a call's two buffers (each `counts[i]` elements of `datatype`, unless it
 * is MPI_IN_PLACE, which the C API judges): contiguity first, then size. Raises the error and returns
 * its code, or MPI_SUCCESS. */
static int check_buffers(MPI_Comm comm, MPI_Datatype datatype, const CFI_cdesc_t *const buffers[2],
                         const int64_t counts[2], const void *in_place) {
    for (int i = 0; i < 2; ++i)
        if (buffers[i]->base_addr != in_place && !is_contiguous(buffers[i])) return raise_error(comm, kNonContiguous);
    for (int i = 0; i < 2; ++i)
        if (buffers[i]->base_addr != in_place && !holds(buffers[i], counts[i], datatype))
            return raise_error(comm, kTooSmall);
    return MPI_SUCCESS;
}

F08_GLUE int mpix_sparse_f08_allreduce(const CFI_cdesc_t *sendbuf, CFI_cdesc_t *recvbuf, int64_t count,
                                       MPI_Fint datatype, MPI_Fint op, MPI_Fint comm, const void *in_place) {
    const MPI_Comm c_comm = MPI_Comm_f2c(comm);
    const MPI_Datatype c_type = MPI_Type_f2c(datatype);
    const CFI_cdesc_t *const buffers[2] = {sendbuf, recvbuf};
    const int64_t counts[2] = {count, count};
    const int rc = check_buffers(c_comm, c_type, buffers, counts, in_place);
    if (rc != MPI_SUCCESS) return rc;
    return MPIX_Sparse_allreduce(address_of(sendbuf, in_place), address_of(recvbuf, in_place), count, c_type,
                                 MPI_Op_f2c(op), c_comm);
}

F08_GLUE int mpix_sparse_f08_allreduce_elements(int64_t nnz, const int64_t *indices, const CFI_cdesc_t *values,
                                                CFI_cdesc_t *recvbuf, int64_t count, MPI_Fint datatype, MPI_Fint op,
                                                MPI_Fint comm, const void *in_place) {
    const MPI_Comm c_comm = MPI_Comm_f2c(comm);
    const MPI_Datatype c_type = MPI_Type_f2c(datatype);
    const CFI_cdesc_t *const buffers[2] = {values, recvbuf};
    const int64_t counts[2] = {nnz, count};
    const int rc = check_buffers(c_comm, c_type, buffers, counts, in_place);
    if (rc != MPI_SUCCESS) return rc;
    void *vals = address_of(values, in_place), *recv = address_of(recvbuf, in_place);
    /* MPI_IN_PLACE as values or recvbuf: the C API's argument checks reject it (never written). */
    return MPIX_Sparse_allreduce_elements(nnz, indices, vals == MPI_IN_PLACE ? NULL : vals,
                                          recv == MPI_IN_PLACE ? NULL : recv, count, c_type, MPI_Op_f2c(op), c_comm);
}

F08_GLUE int mpix_sparse_f08_comm_create(MPI_Fint comm, MPI_Fint info, MPI_Fint *newcomm) {
    MPI_Comm c_newcomm = MPI_COMM_NULL;
    const int rc = MPIX_Sparse_comm_create(MPI_Comm_f2c(comm), MPI_Info_f2c(info), &c_newcomm);
    *newcomm = MPI_Comm_c2f(c_newcomm);
    return rc;
}

F08_GLUE int mpix_sparse_f08_comm_free(MPI_Fint *comm) {
    MPI_Comm c_comm = MPI_Comm_f2c(*comm);
    const int rc = MPIX_Sparse_comm_free(&c_comm);
    *comm = MPI_Comm_c2f(c_comm);
    return rc;
}

/* TYPE(MPIX_Sparse_stats) of the module (bind(C); its counts are c_int64_t, MPI_COUNT_KIND). */
struct f08_stats {
    int64_t calls, bytes_sent, bytes_received, dense_fallbacks;
    int last_algorithm;
};

F08_GLUE int mpix_sparse_f08_stats_get(MPI_Fint comm, struct f08_stats *out) {
    MPIX_Sparse_stats stats = {0, 0, 0, 0, 0};
    const int rc = MPIX_Sparse_stats_get(MPI_Comm_f2c(comm), &stats);
    out->calls = stats.calls;
    out->bytes_sent = stats.bytes_sent;
    out->bytes_received = stats.bytes_received;
    out->dense_fallbacks = stats.dense_fallbacks;
    out->last_algorithm = stats.last_algorithm;
    return rc;
}

F08_GLUE int mpix_sparse_f08_stats_reset(MPI_Fint comm) {
    return MPIX_Sparse_stats_reset(MPI_Comm_f2c(comm));
}

F08_GLUE int mpix_sparse_f08_stats_in_place(MPI_Fint comm, int64_t *bytes) {
    MPI_Count count = 0;
    const int rc = MPIX_Sparse_stats_in_place(MPI_Comm_f2c(comm), &count);
    *bytes = count;
    return rc;
}

F08_GLUE int mpix_sparse_f08_alloc_mem(MPI_Aint size, MPI_Fint info, void **baseptr) {
    *baseptr = NULL;
    return MPIX_Sparse_alloc_mem(size, MPI_Info_f2c(info), baseptr);
}
