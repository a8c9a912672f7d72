! mpix_sparse_f08: the mpix_sparse C API for Fortran, in the style of mpi_f08 (docs/fortran.md).
!
! Handles are mpi_f08's derived types, buffers are assumed-type, assumed-rank (any type, any rank,
! MPI_IN_PLACE for sendbuf) and must be contiguous; counts are default INTEGER or
! INTEGER(MPI_COUNT_KIND) through one generic name; ierror is optional: when absent the code is
! dropped (the communicator's error handler has already seen it), as in mpi_f08.
!
! Every procedure calls a bind(C) function of f08_glue.c with the handles' MPI_VAL (MPI_Fint) and
! the buffers' descriptors; the glue converts them and calls the C API.
module mpix_sparse_f08
    use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_intptr_t, c_ptr
    use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Op, MPI_Info, MPI_COUNT_KIND, MPI_ADDRESS_KIND, MPI_IN_PLACE
    implicit none
    private

    public :: MPIX_Sparse_allreduce, MPIX_Sparse_allreduce_elements
    public :: MPIX_Sparse_comm_create, MPIX_Sparse_comm_free
    public :: MPIX_Sparse_stats, MPIX_Sparse_stats_get, MPIX_Sparse_stats_reset, MPIX_Sparse_stats_in_place
    public :: MPIX_Sparse_alloc_mem, MPIX_Sparse_free_mem
    public :: MPIX_Sparse_get_version, MPIX_Sparse_error_class

    ! The kind of counts crossing to C: MPI_COUNT_KIND, spelt c_int64_t (gfortran takes only
    ! iso_c_binding's kinds for interoperable); an invalid kind, which fails to compile, if they differ.
    integer, parameter :: c_count_kind = merge(c_int64_t, -1, MPI_COUNT_KIND == c_int64_t)
    ! Likewise MPI_ADDRESS_KIND (MPI_Aint) as c_intptr_t.
    integer, parameter :: c_aint_kind = merge(c_intptr_t, -1, MPI_ADDRESS_KIND == c_intptr_t)

    ! Counters of this rank on a communicator, as in C's MPIX_Sparse_stats.
    type, bind(C) :: MPIX_Sparse_stats
        integer(c_count_kind) :: calls           ! collective calls on this communicator
        integer(c_count_kind) :: bytes_sent      ! payload + header bytes handed to the transport
        integer(c_count_kind) :: bytes_received  ! likewise received
        integer(c_count_kind) :: dense_fallbacks ! calls served by the dense path
        integer(c_int) :: last_algorithm         ! MPIX_SPARSE_ALGORITHM_* of the last call
    end type MPIX_Sparse_stats

    integer, parameter, public :: MPIX_SPARSE_ALGORITHM_DENSE = 0
    integer, parameter, public :: MPIX_SPARSE_ALGORITHM_AGGREGATOR = 1
    integer, parameter, public :: MPIX_SPARSE_ALGORITHM_ALLGATHER = 2

    ! Kinds of error, for MPIX_Sparse_error_class (enum MPIX_Sparse_error_kind).
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_ARG = 0
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_COMM = 1
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_INFO = 2
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_REMOTE = 3
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_TRANSPORT = 4
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_PROTOCOL = 5
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_INTERN = 6
    integer, parameter, public :: MPIX_SPARSE_ERRKIND_TIMEOUT = 7

    ! The MPI error class of a kind of library error, e.g.
    !     call MPI_Error_class(ierror, cls)
    !     if (cls == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG)) ...
    ! MPI must be initialized. The C function itself.
    interface
        integer(c_int) function MPIX_Sparse_error_class(kind) bind(C, name="MPIX_Sparse_error_class")
            import :: c_int
            integer(c_int), value :: kind
        end function MPIX_Sparse_error_class
    end interface

    interface MPIX_Sparse_allreduce
        module procedure allreduce, allreduce_large
    end interface MPIX_Sparse_allreduce

    interface MPIX_Sparse_allreduce_elements
        module procedure allreduce_elements, allreduce_elements_large
    end interface MPIX_Sparse_allreduce_elements

    ! f08_glue.c
    interface
        integer(c_int) function glue_allreduce(sendbuf, recvbuf, count, datatype, op, comm, in_place) &
            bind(C, name="mpix_sparse_f08_allreduce")
            import :: c_int, c_count_kind
            type(*), dimension(..), intent(in) :: sendbuf
            type(*), dimension(..), intent(inout) :: recvbuf
            integer(c_count_kind), value :: count
            integer(c_int), value :: datatype, op, comm
            type(*), intent(in) :: in_place
        end function glue_allreduce

        integer(c_int) function glue_allreduce_elements(nnz, indices, values, recvbuf, count, datatype, op, comm, &
                                                        in_place) bind(C, name="mpix_sparse_f08_allreduce_elements")
            import :: c_int, c_int64_t, c_count_kind
            integer(c_count_kind), value :: nnz
            integer(c_int64_t), intent(in) :: indices(*)
            type(*), dimension(..), intent(in) :: values
            type(*), dimension(..), intent(inout) :: recvbuf
            integer(c_count_kind), value :: count
            integer(c_int), value :: datatype, op, comm
            type(*), intent(in) :: in_place
        end function glue_allreduce_elements

        integer(c_int) function glue_comm_create(comm, info, newcomm) bind(C, name="mpix_sparse_f08_comm_create")
            import :: c_int
            integer(c_int), value :: comm, info
            integer(c_int), intent(out) :: newcomm
        end function glue_comm_create

        integer(c_int) function glue_comm_free(comm) bind(C, name="mpix_sparse_f08_comm_free")
            import :: c_int
            integer(c_int), intent(inout) :: comm
        end function glue_comm_free

        integer(c_int) function glue_stats_get(comm, stats) bind(C, name="mpix_sparse_f08_stats_get")
            import :: c_int, MPIX_Sparse_stats
            integer(c_int), value :: comm
            type(MPIX_Sparse_stats), intent(out) :: stats
        end function glue_stats_get

        integer(c_int) function glue_stats_reset(comm) bind(C, name="mpix_sparse_f08_stats_reset")
            import :: c_int
            integer(c_int), value :: comm
        end function glue_stats_reset

        integer(c_int) function glue_stats_in_place(comm, bytes) bind(C, name="mpix_sparse_f08_stats_in_place")
            import :: c_int, c_count_kind
            integer(c_int), value :: comm
            integer(c_count_kind), intent(out) :: bytes
        end function glue_stats_in_place

        integer(c_int) function glue_alloc_mem(size, info, baseptr) bind(C, name="mpix_sparse_f08_alloc_mem")
            import :: c_int, c_aint_kind, c_ptr
            integer(c_aint_kind), value :: size
            integer(c_int), value :: info
            type(c_ptr), intent(out) :: baseptr
        end function glue_alloc_mem

        integer(c_int) function c_free_mem(base) bind(C, name="MPIX_Sparse_free_mem")
            import :: c_int, c_ptr
            type(c_ptr), value :: base
        end function c_free_mem

        integer(c_int) function c_get_version(major, minor, patch) bind(C, name="MPIX_Sparse_get_version")
            import :: c_int
            integer(c_int), intent(out) :: major, minor, patch
        end function c_get_version
    end interface

contains

    ! Same contract as MPI_Allreduce (the C API's MPIX_Sparse_allreduce).
    subroutine allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierror)
        type(*), dimension(..), intent(in) :: sendbuf
        type(*), dimension(..), intent(inout) :: recvbuf
        integer, intent(in) :: count
        type(MPI_Datatype), intent(in) :: datatype
        type(MPI_Op), intent(in) :: op
        type(MPI_Comm), intent(in) :: comm
        integer, optional, intent(out) :: ierror

        call allreduce_large(sendbuf, recvbuf, int(count, MPI_COUNT_KIND), datatype, op, comm, ierror)
    end subroutine allreduce

    subroutine allreduce_large(sendbuf, recvbuf, count, datatype, op, comm, ierror)
        type(*), dimension(..), intent(in) :: sendbuf
        type(*), dimension(..), intent(inout) :: recvbuf
        integer(MPI_COUNT_KIND), intent(in) :: count
        type(MPI_Datatype), intent(in) :: datatype
        type(MPI_Op), intent(in) :: op
        type(MPI_Comm), intent(in) :: comm
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_allreduce(sendbuf, recvbuf, count, datatype%MPI_VAL, op%MPI_VAL, comm%MPI_VAL, MPI_IN_PLACE)
        if (present(ierror)) ierror = rc
    end subroutine allreduce_large

    ! nnz (index, value) pairs of a vector of length count; indices are 0-based, as in C. recvbuf
    ! receives the dense result (count elements) on every rank.
    subroutine allreduce_elements(nnz, indices, values, recvbuf, count, datatype, op, comm, ierror)
        integer, intent(in) :: nnz
        integer(c_int64_t), intent(in) :: indices(*)
        type(*), dimension(..), intent(in) :: values
        type(*), dimension(..), intent(inout) :: recvbuf
        integer, intent(in) :: count
        type(MPI_Datatype), intent(in) :: datatype
        type(MPI_Op), intent(in) :: op
        type(MPI_Comm), intent(in) :: comm
        integer, optional, intent(out) :: ierror

        call allreduce_elements_large(int(nnz, MPI_COUNT_KIND), indices, values, recvbuf, int(count, MPI_COUNT_KIND), &
                                      datatype, op, comm, ierror)
    end subroutine allreduce_elements

    subroutine allreduce_elements_large(nnz, indices, values, recvbuf, count, datatype, op, comm, ierror)
        integer(MPI_COUNT_KIND), intent(in) :: nnz
        integer(c_int64_t), intent(in) :: indices(*)
        type(*), dimension(..), intent(in) :: values
        type(*), dimension(..), intent(inout) :: recvbuf
        integer(MPI_COUNT_KIND), intent(in) :: count
        type(MPI_Datatype), intent(in) :: datatype
        type(MPI_Op), intent(in) :: op
        type(MPI_Comm), intent(in) :: comm
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_allreduce_elements(nnz, indices, values, recvbuf, count, datatype%MPI_VAL, op%MPI_VAL, &
                                     comm%MPI_VAL, MPI_IN_PLACE)
        if (present(ierror)) ierror = rc
    end subroutine allreduce_elements_large

    ! A configured communicator (info: MPI_INFO_NULL or mpix_sparse_* keys). Dedicated aggregator
    ! ranks get MPI_COMM_NULL, after serving until the workers free theirs.
    subroutine MPIX_Sparse_comm_create(comm, info, newcomm, ierror)
        type(MPI_Comm), intent(in) :: comm
        type(MPI_Info), intent(in) :: info
        type(MPI_Comm), intent(out) :: newcomm
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_comm_create(comm%MPI_VAL, info%MPI_VAL, newcomm%MPI_VAL)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_comm_create

    ! Sets comm to MPI_COMM_NULL.
    subroutine MPIX_Sparse_comm_free(comm, ierror)
        type(MPI_Comm), intent(inout) :: comm
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_comm_free(comm%MPI_VAL)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_comm_free

    subroutine MPIX_Sparse_stats_get(comm, stats, ierror)
        type(MPI_Comm), intent(in) :: comm
        type(MPIX_Sparse_stats), intent(out) :: stats
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_stats_get(comm%MPI_VAL, stats)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_stats_get

    subroutine MPIX_Sparse_stats_reset(comm, ierror)
        type(MPI_Comm), intent(in) :: comm
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_stats_reset(comm%MPI_VAL)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_stats_reset

    ! Payload bytes this rank's peers read in place from memory of MPIX_Sparse_alloc_mem (local).
    subroutine MPIX_Sparse_stats_in_place(comm, bytes, ierror)
        type(MPI_Comm), intent(in) :: comm
        integer(MPI_COUNT_KIND), intent(out) :: bytes
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_stats_in_place(comm%MPI_VAL, bytes)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_stats_in_place

    ! Memory the ranks of a machine read in place, as MPI_Alloc_mem's mpi_f08 binding gives it: map it
    ! with c_f_pointer, pass it as any buffer, free it with MPIX_Sparse_free_mem (local, not collective).
    subroutine MPIX_Sparse_alloc_mem(size, info, baseptr, ierror)
        integer(MPI_ADDRESS_KIND), intent(in) :: size
        type(MPI_Info), intent(in) :: info
        type(c_ptr), intent(out) :: baseptr
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = glue_alloc_mem(size, info%MPI_VAL, baseptr)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_alloc_mem

    ! C_NULL_PTR is a no-op; a pointer not from MPIX_Sparse_alloc_mem is an error (left untouched).
    subroutine MPIX_Sparse_free_mem(base, ierror)
        type(c_ptr), intent(in) :: base
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = c_free_mem(base)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_free_mem

    ! The version of the library loaded. Callable before MPI_Init and after MPI_Finalize.
    subroutine MPIX_Sparse_get_version(major, minor, patch, ierror)
        integer, intent(out) :: major, minor, patch
        integer, optional, intent(out) :: ierror
        integer :: rc

        rc = c_get_version(major, minor, patch)
        if (present(ierror)) ierror = rc
    end subroutine MPIX_Sparse_get_version

end module mpix_sparse_f08
