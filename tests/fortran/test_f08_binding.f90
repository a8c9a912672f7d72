! The Fortran binding under MPI (every rank runs every check; collective): block-sparse data of
! REAL(8), REAL(4), INTEGER and INTEGER(8) in arrays of rank 0 to 3, ~1% of 256-element blocks
! non-zero in rank-dependent patterns, compared bitwise with MPI_Allreduce of the same data (values
! are small integers, so float sums are exact in any order, as in tests/mpi/test_allreduce_random.cc);
! in place; both count kinds; the element variant against a dense reference; statistics showing the
! sparse path was taken and sent far fewer bytes than the dense size; a configured communicator; and
! errors (non-contiguous sections, a bad info value) returned in ierror with the library's classes.
! Exits non-zero on any mismatch.
program test_f08_binding
    use, intrinsic :: iso_fortran_env, only: int64, real32, real64, error_unit
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated, c_null_ptr
    use mpi_f08
    use mpix_sparse_f08
    implicit none

    integer, parameter :: block = 256           ! the library's default block size
    real(real64), parameter :: density = 0.01_real64
    integer, parameter :: overlapping = 1, clustered = 2
    integer :: rank, nranks, failures, checks, total_failures, total_checks

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    failures = 0
    checks = 0

    call check_real64_rank3(overlapping, 11)
    call check_real64_rank3(clustered, 12)
    call check_real32_rank2_in_place(13)
    call check_integer_rank1(MPI_SUM, 14)
    call check_integer_rank1(MPI_BXOR, 15)
    call check_int64_bor_large_count(16)
    call check_scalar()
    call check_elements_real64(17)
    call check_elements_integer_large_count(18)
    call check_configured_comm(19)
    call check_alloc_mem()
    call check_errors()
    call check_version()

    call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call MPI_Allreduce(checks, total_checks, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0) print '(a,i0,a,i0,a,i0,a)', 'test_f08_binding: ', nranks, ' ranks, ', total_checks, &
        ' checks, ', total_failures, ' failed'
    call MPI_Finalize()
    if (total_failures /= 0) error stop 1

contains

    subroutine expect(ok, what)
        logical, intent(in) :: ok
        character(*), intent(in) :: what

        checks = checks + 1
        if (.not. ok) then
            failures = failures + 1
            write (error_unit, '(a,i0,2a)') 'rank ', rank, ': FAILED: ', what
        end if
    end subroutine expect

    ! MINSTD: small, portable, no overflow in 64-bit arithmetic; the same stream for the same seed.
    real(real64) function uniform(state)
        integer(int64), intent(inout) :: state

        state = mod(state * 48271_int64, 2147483647_int64)
        uniform = real(state, real64) / 2147483647.0_real64
    end function uniform

    integer function small_int(state)
        integer(int64), intent(inout) :: state

        small_int = int(uniform(state) * 201) - 100
    end function small_int

    ! Values zero outside ~density of the blocks: overlapping (half the blocks chosen the same way
    ! on every rank, half per rank) or clustered (one run of blocks at a rank-dependent place).
    subroutine sparse_values(values, pattern, seed)
        real(real64), intent(out) :: values(:)
        integer, intent(in) :: pattern, seed
        integer(int64) :: shared, own
        integer :: b, nblocks, first, run, i
        logical :: on

        values = 0
        nblocks = (size(values) + block - 1) / block
        shared = 1000 + seed
        own = 7919 * (rank + 1) + seed
        run = max(1, int(density * nblocks))
        first = mod(rank * 37 + seed * 11, max(1, nblocks - run))
        do b = 0, nblocks - 1
            if (pattern == overlapping) then
                on = uniform(shared) < density / 2
                on = uniform(own) < density / 2 .or. on
            else
                on = b >= first .and. b < first + run
            end if
            if (.not. on) cycle
            do i = b * block + 1, min(size(values), (b + 1) * block)
                values(i) = small_int(own)
            end do
        end do
        ! The first and the last (partial) block are non-zero on every rank: the edges are checked.
        values(1) = -1 - rank
        values(size(values)) = 1 + rank
    end subroutine sparse_values

    logical function same_real64(a, b)
        real(real64), intent(in) :: a(:), b(:)

        same_real64 = size(a) == size(b)
        if (same_real64) same_real64 = all(transfer(a, 0_int64, size(a)) == transfer(b, 0_int64, size(b)))
    end function same_real64

    logical function same_real32(a, b)
        real(real32), intent(in) :: a(:), b(:)

        same_real32 = size(a) == size(b)
        if (same_real32) same_real32 = all(transfer(a, 0, size(a)) == transfer(b, 0, size(b)))
    end function same_real32

    ! The call just made on comm took the sparse path and sent less than a quarter of the dense size
    ! (a dense allreduce sends about twice the buffer).
    subroutine expect_sparse_path(comm, dense_bytes, what)
        type(MPI_Comm), intent(in) :: comm
        integer(MPI_COUNT_KIND), intent(in) :: dense_bytes
        character(*), intent(in) :: what
        type(MPIX_Sparse_stats) :: stats
        integer :: ierror

        call MPIX_Sparse_stats_get(comm, stats, ierror)
        call expect(ierror == MPI_SUCCESS, what // ': stats_get')
        call expect(stats%calls == 1 .and. stats%dense_fallbacks == 0, what // ': one call, not dense')
        if (nranks > 1) then
            call expect(stats%last_algorithm /= MPIX_SPARSE_ALGORITHM_DENSE, what // ': sparse algorithm')
            call expect(stats%bytes_sent > 0 .and. stats%bytes_sent < dense_bytes / 4, what // ': bytes sent')
        end if
        call MPIX_Sparse_stats_reset(comm, ierror)
        call expect(ierror == MPI_SUCCESS, what // ': stats_reset')
    end subroutine expect_sparse_path

    subroutine check_real64_rank3(pattern, seed)
        integer, intent(in) :: pattern, seed
        integer, parameter :: shape3(3) = [60, 50, 100]
        integer, parameter :: n = product(shape3)
        real(real64), allocatable :: flat(:), expected(:), send(:, :, :), recv(:, :, :)
        integer :: ierror

        allocate(flat(n), expected(n))
        call sparse_values(flat, pattern, seed)
        send = reshape(flat, shape3)
        allocate(recv(shape3(1), shape3(2), shape3(3)), source=-1.0_real64)
        call MPI_Allreduce(flat, expected, n, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD)
        call MPIX_Sparse_stats_reset(MPI_COMM_WORLD)
        call MPIX_Sparse_allreduce(send, recv, n, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS, 'real64 rank 3: ierror')
        call expect(same_real64(reshape(recv, [n]), expected), 'real64 rank 3: equals MPI_Allreduce')
        call expect(any(abs(expected) > 0), 'real64 rank 3: data not all zero')
        call expect_sparse_path(MPI_COMM_WORLD, int(n, MPI_COUNT_KIND) * 8, 'real64 rank 3')
    end subroutine check_real64_rank3

    subroutine check_real32_rank2_in_place(seed)
        integer, intent(in) :: seed
        integer, parameter :: rows = 500, cols = 600, n = rows * cols
        real(real64), allocatable :: flat(:)
        real(real32), allocatable :: values(:), expected(:), buffer(:, :)
        integer :: ierror

        allocate(flat(n), expected(n))
        call sparse_values(flat, overlapping, seed)
        values = real(flat, real32)
        call MPI_Allreduce(values, expected, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
        buffer = reshape(values, [rows, cols])
        call MPIX_Sparse_stats_reset(MPI_COMM_WORLD)
        call MPIX_Sparse_allreduce(MPI_IN_PLACE, buffer, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS, 'real32 in place: ierror')
        call expect(same_real32(reshape(buffer, [n]), expected), 'real32 in place: equals MPI_Allreduce')
        call expect_sparse_path(MPI_COMM_WORLD, int(n, MPI_COUNT_KIND) * 4, 'real32 in place')
    end subroutine check_real32_rank2_in_place

    subroutine check_integer_rank1(op, seed)
        type(MPI_Op), intent(in) :: op
        integer, intent(in) :: seed
        integer, parameter :: n = 400000
        real(real64), allocatable :: flat(:)
        integer, allocatable :: values(:), expected(:), recv(:)
        integer :: ierror

        allocate(flat(n), expected(n))
        allocate(recv(n), source=-7)
        call sparse_values(flat, clustered, seed)
        values = int(flat) * 65599  ! bits above the low byte too, for BXOR
        call MPI_Allreduce(values, expected, n, MPI_INTEGER, op, MPI_COMM_WORLD)
        call MPIX_Sparse_stats_reset(MPI_COMM_WORLD)
        call MPIX_Sparse_allreduce(values, recv, n, MPI_INTEGER, op, MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS, 'integer: ierror')
        call expect(all(recv == expected), 'integer: equals MPI_Allreduce')
        call expect_sparse_path(MPI_COMM_WORLD, int(n, MPI_COUNT_KIND) * 4, 'integer')
    end subroutine check_integer_rank1

    ! The INTEGER(MPI_COUNT_KIND) specific of the generic, on a rank-2 INTEGER(8) array.
    subroutine check_int64_bor_large_count(seed)
        integer, intent(in) :: seed
        integer(MPI_COUNT_KIND), parameter :: n = 1000 * 300
        real(real64), allocatable :: flat(:)
        integer(int64), allocatable :: values(:), expected(:), recv(:, :)
        integer :: ierror

        allocate(flat(n), expected(n))
        allocate(recv(1000, 300), source=-7_int64)
        call sparse_values(flat, overlapping, seed)
        values = ishft(int(flat, int64), 40) + int(flat, int64)
        call MPI_Allreduce(values, expected, int(n), MPI_INTEGER8, MPI_BOR, MPI_COMM_WORLD)
        call MPIX_Sparse_stats_reset(MPI_COMM_WORLD)
        call MPIX_Sparse_allreduce(values, recv, n, MPI_INTEGER8, MPI_BOR, MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS, 'int64 BOR, MPI_COUNT_KIND count: ierror')
        call expect(all(reshape(recv, [n]) == expected), 'int64 BOR, MPI_COUNT_KIND count: equals MPI_Allreduce')
        call expect_sparse_path(MPI_COMM_WORLD, n * 8, 'int64 BOR, MPI_COUNT_KIND count')
    end subroutine check_int64_bor_large_count

    ! Rank 0 (scalars): the dense path, with MPI_DOUBLE_PRECISION.
    subroutine check_scalar()
        real(real64) :: x, sum
        integer :: ierror

        x = rank + 1
        sum = -1
        call MPIX_Sparse_allreduce(x, sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS .and. nint(sum) == nranks * (nranks + 1) / 2, 'scalar sum')
    end subroutine check_scalar

    ! Random (0-based index, value) pairs, duplicates included, summed into a rank-2 result.
    subroutine check_elements_real64(seed)
        integer, intent(in) :: seed
        integer, parameter :: rows = 400, cols = 500, count = rows * cols
        integer :: nnz, k, ierror
        integer(int64) :: state
        integer(int64), allocatable :: indices(:)
        real(real64), allocatable :: values(:), dense(:), expected(:), recv(:, :)

        state = 31 * (rank + 1) + seed
        nnz = 1000 + 500 * rank
        allocate(indices(nnz), values(nnz), dense(count), expected(count), recv(rows, cols))
        dense = 0
        do k = 1, nnz
            indices(k) = int(uniform(state) * count, int64)
            if (k > 1 .and. mod(k, 10) == 0) indices(k) = indices(k - 1)  ! a duplicate
            values(k) = small_int(state)
            dense(indices(k) + 1) = dense(indices(k) + 1) + values(k)
        end do
        call MPI_Allreduce(dense, expected, count, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
        recv = -1
        call MPIX_Sparse_allreduce_elements(nnz, indices, values, recv, count, MPI_DOUBLE_PRECISION, MPI_SUM, &
                                            MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS, 'elements real64: ierror')
        call expect(same_real64(reshape(recv, [count]), expected), 'elements real64: equals dense reference')
    end subroutine check_elements_real64

    ! The MPI_COUNT_KIND specific, INTEGER values; rank 0 contributes no pairs.
    subroutine check_elements_integer_large_count(seed)
        integer, intent(in) :: seed
        integer(MPI_COUNT_KIND), parameter :: count = 100000
        integer(MPI_COUNT_KIND) :: nnz, k
        integer :: ierror
        integer(int64) :: state
        integer(int64), allocatable :: indices(:)
        integer, allocatable :: values(:), dense(:), expected(:), recv(:)

        state = 17 * (rank + 1) + seed
        nnz = 700 * rank
        allocate(indices(nnz), values(nnz), dense(count), expected(count))
        allocate(recv(count), source=-7)
        dense = 0
        do k = 1, nnz
            indices(k) = int(uniform(state) * count, int64)
            values(k) = small_int(state)
            dense(indices(k) + 1) = dense(indices(k) + 1) + values(k)
        end do
        call MPI_Allreduce(dense, expected, int(count), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
        call MPIX_Sparse_allreduce_elements(nnz, indices, values, recv, count, MPI_INTEGER, MPI_SUM, &
                                            MPI_COMM_WORLD, ierror)
        call expect(ierror == MPI_SUCCESS, 'elements integer: ierror')
        call expect(all(recv == expected), 'elements integer: equals dense reference')
    end subroutine check_elements_integer_large_count

    ! A communicator from MPIX_Sparse_comm_create with info keys: the aggregator algorithm on 64-element
    ! blocks; freed to MPI_COMM_NULL.
    subroutine check_configured_comm(seed)
        integer, intent(in) :: seed
        integer, parameter :: n = 200000
        type(MPI_Info) :: info
        type(MPI_Comm) :: comm
        type(MPIX_Sparse_stats) :: stats
        real(real64), allocatable :: values(:), expected(:), recv(:)
        integer :: ierror

        allocate(values(n), expected(n))
        allocate(recv(n), source=-7.0_real64)
        call MPI_Info_create(info)
        call MPI_Info_set(info, 'mpix_sparse_algorithm', 'aggregator')
        call MPI_Info_set(info, 'mpix_sparse_block_size', '64')
        call MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, comm, ierror)
        call MPI_Info_free(info)
        call expect(ierror == MPI_SUCCESS .and. comm /= MPI_COMM_NULL, 'comm_create')
        if (comm == MPI_COMM_NULL) return
        call sparse_values(values, overlapping, seed)
        call MPI_Allreduce(values, expected, n, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD)
        call MPIX_Sparse_allreduce(values, recv, n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(ierror == MPI_SUCCESS .and. same_real64(recv, expected), 'configured comm: equals MPI_Allreduce')
        call MPIX_Sparse_stats_get(comm, stats)
        if (nranks > 1) call expect(stats%last_algorithm == MPIX_SPARSE_ALGORITHM_AGGREGATOR, &
                                    'configured comm: the aggregator algorithm')
        call MPIX_Sparse_comm_free(comm, ierror)
        call expect(ierror == MPI_SUCCESS .and. comm == MPI_COMM_NULL, 'comm_free: MPI_COMM_NULL')
    end subroutine check_configured_comm

    ! Arrays in memory from MPIX_Sparse_alloc_mem (mapped with c_f_pointer), which the ranks of a
    ! machine read in place: the result equals MPI_Allreduce's, and payloads went by reference.
    subroutine check_alloc_mem()
        integer, parameter :: n = 1048576
        integer(MPI_ADDRESS_KIND), parameter :: bytes = int(n, MPI_ADDRESS_KIND) * 8
        type(c_ptr) :: send_mem, recv_mem
        real(real64), pointer :: send(:), recv(:)
        real(real64), allocatable :: expected(:)
        type(MPI_Info) :: info
        type(MPI_Comm) :: comm
        integer(MPI_COUNT_KIND) :: in_place
        integer :: ierror, i

        call MPIX_Sparse_alloc_mem(bytes, MPI_INFO_NULL, send_mem, ierror)
        call expect(ierror == MPI_SUCCESS .and. c_associated(send_mem), 'alloc_mem: send buffer')
        call MPIX_Sparse_alloc_mem(bytes, MPI_INFO_NULL, recv_mem, ierror)
        call expect(ierror == MPI_SUCCESS .and. c_associated(recv_mem), 'alloc_mem: recv buffer')
        if (.not. (c_associated(send_mem) .and. c_associated(recv_mem))) return
        call c_f_pointer(send_mem, send, [n])
        call c_f_pointer(recv_mem, recv, [n])
        send = [(real(mod(i + rank, 7) + 1, real64), i = 1, n)]  ! dense: whole runs go by reference
        recv = -7
        allocate(expected(n))
        call MPI_Allreduce(send, expected, n, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD)
        call MPI_Info_create(info)
        call MPI_Info_set(info, 'mpix_sparse_algorithm', 'aggregator')
        call MPIX_Sparse_comm_create(MPI_COMM_WORLD, info, comm, ierror)
        call MPI_Info_free(info)
        call MPIX_Sparse_allreduce(send, recv, n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(ierror == MPI_SUCCESS .and. same_real64(recv, expected), 'alloc_mem: equals MPI_Allreduce')
        call MPIX_Sparse_stats_in_place(comm, in_place, ierror)
        call expect(ierror == MPI_SUCCESS .and. (nranks == 1 .or. in_place > 0), 'alloc_mem: payloads read in place')
        call MPIX_Sparse_comm_free(comm)
        call MPIX_Sparse_free_mem(send_mem, ierror)
        call expect(ierror == MPI_SUCCESS, 'free_mem: send buffer')
        call MPIX_Sparse_free_mem(recv_mem, ierror)
        call expect(ierror == MPI_SUCCESS, 'free_mem: recv buffer')
        call MPIX_Sparse_free_mem(c_null_ptr, ierror)
        call expect(ierror == MPI_SUCCESS, 'free_mem: C_NULL_PTR is a no-op')
    end subroutine check_alloc_mem

    ! On a communicator with MPI_ERRORS_RETURN, errors come back in ierror with the library's
    ! classes (and are dropped without harm when ierror is absent).
    subroutine check_errors()
        integer, parameter :: n = 1000
        real(real64), allocatable :: a(:), b(:)
        integer(int64) :: indices(1)
        type(MPI_Comm) :: comm, newcomm
        type(MPI_Info) :: info
        integer :: ierror, length
        character(MPI_MAX_ERROR_STRING) :: message

        allocate(a(2 * n), b(2 * n))
        a = 1
        b = 0
        indices = 0
        call MPI_Comm_dup(MPI_COMM_WORLD, comm)
        call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)

        call MPIX_Sparse_allreduce(a(1:2*n:2), b(1:n), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'non-contiguous sendbuf: MPIX_ERR_SPARSE_ARG')
        call MPI_Error_string(ierror, message, length)
        call expect(index(message(1:length), 'contiguous') > 0, 'non-contiguous: message says so')
        call MPIX_Sparse_allreduce(a(1:n), b(1:2*n:2), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'non-contiguous recvbuf: MPIX_ERR_SPARSE_ARG')
        call MPIX_Sparse_allreduce(MPI_IN_PLACE, b(1:2*n:2), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'non-contiguous in-place recvbuf: MPIX_ERR_SPARSE_ARG')
        call MPIX_Sparse_allreduce_elements(1, indices, a(1:2*n:2), b, n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'elements, non-contiguous values: MPIX_ERR_SPARSE_ARG')
        ! The descriptors' sizes are checked: nothing is written past an array, or into MPI_IN_PLACE.
        call MPIX_Sparse_allreduce(a(1:n), b(1:n/2), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'recvbuf smaller than count: MPIX_ERR_SPARSE_ARG')
        call MPI_Error_string(ierror, message, length)
        call expect(index(message(1:length), 'smaller') > 0, 'too small: message says so')
        call MPIX_Sparse_allreduce(a(1:n/2), b(1:n), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'sendbuf smaller than count: MPIX_ERR_SPARSE_ARG')
        call MPIX_Sparse_allreduce(a(1:n), MPI_IN_PLACE, n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'MPI_IN_PLACE as recvbuf: MPIX_ERR_SPARSE_ARG')
        call MPIX_Sparse_allreduce_elements(1, indices, a(1:0), b, n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'elements, fewer values than nnz: MPIX_ERR_SPARSE_ARG')
        call MPIX_Sparse_allreduce_elements(1, indices, a, b(1:n/2), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), &
                    'elements, recvbuf smaller than count: MPIX_ERR_SPARSE_ARG')
        call MPIX_Sparse_allreduce(a(1:2*n:2), b(1:n), n, MPI_REAL8, MPI_SUM, comm)  ! no ierror: dropped
        call expect(all(abs(b) < 0.5), 'failed calls left recvbuf alone')
        ! An error raised by the C library itself, through the glue.
        call MPIX_Sparse_allreduce(a, b, -1, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_ARG), 'count -1: MPIX_ERR_SPARSE_ARG')
        call MPI_Info_create(info)
        call MPI_Info_set(info, 'mpix_sparse_block_size', 'banana')
        call MPIX_Sparse_comm_create(comm, info, newcomm, ierror)
        call MPI_Info_free(info)
        call expect(class_of(ierror) == MPIX_Sparse_error_class(MPIX_SPARSE_ERRKIND_INFO) &
                    .and. newcomm == MPI_COMM_NULL, 'bad info value: MPIX_ERR_SPARSE_INFO')
        ! Still usable after the errors.
        call MPIX_Sparse_allreduce(a(1:n), b(1:n), n, MPI_REAL8, MPI_SUM, comm, ierror)
        call expect(ierror == MPI_SUCCESS .and. all(nint(b(1:n)) == nranks), 'after the errors: a good call')
        call MPI_Comm_free(comm)
    end subroutine check_errors

    integer function class_of(code)
        integer, intent(in) :: code

        class_of = MPI_SUCCESS
        if (code /= MPI_SUCCESS) call MPI_Error_class(code, class_of)
    end function class_of

    subroutine check_version()
        integer :: major, minor, patch, ierror

        call MPIX_Sparse_get_version(major, minor, patch, ierror)
        call expect(ierror == MPI_SUCCESS .and. major >= 0 .and. minor >= 0 .and. patch >= 0 &
                    .and. major + minor + patch > 0, 'get_version')
    end subroutine check_version

end program test_f08_binding
