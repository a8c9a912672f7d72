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

/* An error code of the library's argument class with a Fortran-specific message, registered once. */
static int g_noncontiguous_code;
static void register_noncontiguous_code(void) {
    const int arg_class = MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG);
    g_noncontiguous_code = arg_class;
    if (MPI_Add_error_code(arg_class, &g_noncontiguous_code) != MPI_SUCCESS)
        g_noncontiguous_code = arg_class;
    else
        MPI_Add_error_string(g_noncontiguous_code,
                             "MPIX_Sparse (Fortran): buffer is not contiguous (pass a contiguous array or copy)");
}

/* Raised like the C API's errors: through the communicator's handler first, then returned. */
static int raise_noncontiguous(MPI_Comm comm) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_noncontiguous_code);
    MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, g_noncontiguous_code);
    return g_noncontiguous_code;
}

/* Whether the C API may read the buffer as count elements from its first: scalars (a(1) too, MPI's
 * idiom for "from here on"), contiguous arrays (assumed-size ones included), and arrays of at most one
 * element, whatever their stride (gfortran's CFI_is_contiguous says no to a(3:3:2)). */
static int is_contiguous(const CFI_cdesc_t *a) {
    if (a->rank == 0 || CFI_is_contiguous(a)) return 1;
    CFI_index_t elements = 1;
    for (int d = 0; d < a->rank; ++d)
        elements *= a->dim[d].extent;
    return elements <= 1;
}

/* in_place: the address of mpi_f08's MPI_IN_PLACE, which a sendbuf of MPI_IN_PLACE shares. */
F08_GLUE int mpix_sparse_f08_allreduce(const CFI_cdesc_t *sendbuf, CFI_cdesc_t *recvbuf, int64_t count,
                                       MPI_Fint datatype, MPI_Fint op, MPI_Fint comm, const void *in_place) {
    const MPI_Comm c_comm = MPI_Comm_f2c(comm);
    const MPI_Op c_op = MPI_Op_f2c(op);
    const int send_in_place = sendbuf->base_addr == in_place;
    if ((!send_in_place && !is_contiguous(sendbuf)) || !is_contiguous(recvbuf)) return raise_noncontiguous(c_comm);
    return MPIX_Sparse_allreduce(send_in_place ? MPI_IN_PLACE : sendbuf->base_addr, recvbuf->base_addr, count,
                                 MPI_Type_f2c(datatype), c_op, c_comm);
}

F08_GLUE int mpix_sparse_f08_allreduce_elements(int64_t nnz, const int64_t *indices, const CFI_cdesc_t *values,
                                                CFI_cdesc_t *recvbuf, int64_t count, MPI_Fint datatype, MPI_Fint op,
                                                MPI_Fint comm) {
    const MPI_Comm c_comm = MPI_Comm_f2c(comm);
    const MPI_Op c_op = MPI_Op_f2c(op);
    if (!is_contiguous(values) || !is_contiguous(recvbuf)) return raise_noncontiguous(c_comm);
    return MPIX_Sparse_allreduce_elements(nnz, indices, values->base_addr, recvbuf->base_addr, count,
                                          MPI_Type_f2c(datatype), c_op, c_comm);
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
