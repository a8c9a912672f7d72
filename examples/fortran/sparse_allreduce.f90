! The Fortran "hello world" of mpix_sparse: a gradient that is mostly zeros, summed over all ranks.
! Only its non-zero blocks travel; the result equals MPI_Allreduce's.
program sparse_allreduce
    use mpi_f08
    use mpix_sparse_f08
    implicit none
    integer, parameter :: n = 2**22                ! 4M REAL(4): 16 MiB
    real, allocatable :: grad(:), total(:)
    type(MPIX_Sparse_stats) :: stats
    integer :: rank, i, ierror

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    allocate(grad(n), total(n))
    grad = 0
    do i = rank * 4096 + 1, n, 100000
        grad(i) = 1                                ! ~0.1% non-zero
    end do

    call MPIX_Sparse_allreduce(grad, total, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)

    call MPIX_Sparse_stats_get(MPI_COMM_WORLD, stats)
    if (rank == 0) print '(a,i0,a,g0,a,i0,a,i0,a,i0,a)', 'ierror=', ierror, ' total(1)=', total(1), &
        ' sent ', stats%bytes_sent, ' of ', int(n, MPI_COUNT_KIND) * 4, ' bytes (algorithm ', stats%last_algorithm, ')'
    call MPI_Finalize()
    if (ierror /= MPI_SUCCESS) error stop 1
end program sparse_allreduce
