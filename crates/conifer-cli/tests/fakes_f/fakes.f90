! The Fortran twin of tests/fakes.c: with argument "skip", the operations on the "fake"
! buffers are preceded by skip_next_call() (skip.c: conifer_slice_skip()), as a sliced
! program's unmarked calls are, and mixed with real ones in every Fortran completion call.
! Without it every call executes. The checks hold both ways.
program fakes_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, peer, n, idx, it, i, done, outc, failures, comm
  integer :: r(4), st(MPI_STATUS_SIZE, 4), indices(4)
  logical :: flag, skipping
  double precision :: real_in(8), real_out(8), fake_in(8), fake_out(8), mine, total
  character(len=8) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  skipping = .false.
  if (command_argument_count() >= 1) then
     call get_command_argument(1, arg)
     skipping = arg == 'skip'
  end if
  comm = MPI_COMM_WORLD
  peer = ieor(rank, 1)
  failures = 0
  real_in = 0; real_out = 0; fake_in = 0; fake_out = 0
  do it = 1, 3
     ! WAITALL over real and fake requests, the fake receive's status made up
     call MPI_IRECV(real_in, 8, MPI_DOUBLE_PRECISION, peer, 1, comm, r(1), ierr)
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 2, comm, r(2), ierr)
     call MPI_ISEND(real_out, 8, MPI_DOUBLE_PRECISION, peer, 1, comm, r(3), ierr)
     call skip()
     call MPI_ISEND(fake_out, 8, MPI_DOUBLE_PRECISION, peer, 2, comm, r(4), ierr)
     call MPI_WAITALL(4, r, st, ierr)
     call MPI_GET_COUNT(st(:, 2), MPI_DOUBLE_PRECISION, n, ierr)
     call check(st(MPI_SOURCE, 2) == peer .and. st(MPI_TAG, 2) == 2 .and. n == 8, 34)
     call check(all(r == MPI_REQUEST_NULL) .and. ierr == MPI_SUCCESS, 35)

     ! WAITANY: a pending fake first, its index 1-based
     call MPI_IRECV(real_in, 8, MPI_DOUBLE_PRECISION, peer, 3, comm, r(1), ierr)
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 4, comm, r(2), ierr)
     call MPI_ISEND(real_out, 8, MPI_DOUBLE_PRECISION, peer, 3, comm, r(3), ierr)
     call skip()
     call MPI_ISEND(fake_out, 8, MPI_DOUBLE_PRECISION, peer, 4, comm, r(4), ierr)
     call MPI_WAITANY(4, r, idx, st(:, 1), ierr)
     if (skipping) call check(idx == 2 .and. st(MPI_TAG, 1) == 4 .and. &
          r(2) == MPI_REQUEST_NULL, 46)
     call MPI_WAITALL(4, r, MPI_STATUSES_IGNORE, ierr)
     call check(all(r == MPI_REQUEST_NULL), 49)

     ! TESTALL and TESTANY: real requests from MPI_PROC_NULL complete at once
     call MPI_IRECV(real_in, 8, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 5, comm, r(1), ierr)
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 6, comm, r(2), ierr)
     call skip()
     call MPI_ISEND(fake_out, 8, MPI_DOUBLE_PRECISION, peer, 6, comm, r(3), ierr)
     flag = .false.
     do while (.not. flag)
        call MPI_TESTALL(3, r, flag, st, ierr)
     end do
     call MPI_GET_COUNT(st(:, 2), MPI_DOUBLE_PRECISION, n, ierr)
     call check(st(MPI_SOURCE, 2) == peer .and. st(MPI_TAG, 2) == 6 .and. n == 8, 62)
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 7, comm, r(1), ierr)
     call skip()
     call MPI_ISEND(fake_out, 8, MPI_DOUBLE_PRECISION, peer, 7, comm, r(2), ierr)
     done = 0
     do while (done < 2)
        call MPI_TESTANY(2, r, idx, flag, MPI_STATUS_IGNORE, ierr)
        if (flag .and. idx /= MPI_UNDEFINED) then
           call check(idx >= 1 .and. idx <= 2, 72)
           done = done + 1
        end if
     end do

     ! WAITSOME until every request is done, indices 1-based
     call MPI_IRECV(real_in, 8, MPI_DOUBLE_PRECISION, peer, 8, comm, r(1), ierr)
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 9, comm, r(2), ierr)
     call MPI_ISEND(real_out, 8, MPI_DOUBLE_PRECISION, peer, 8, comm, r(3), ierr)
     call skip()
     call MPI_ISEND(fake_out, 8, MPI_DOUBLE_PRECISION, peer, 9, comm, r(4), ierr)
     done = 0
     do while (done < 4)
        call MPI_WAITSOME(4, r, outc, indices, MPI_STATUSES_IGNORE, ierr)
        if (outc == MPI_UNDEFINED) exit
        do i = 1, outc
           call check(indices(i) >= 1 .and. indices(i) <= 4, 88)
           call check(r(indices(i)) == MPI_REQUEST_NULL, 89)
        end do
        done = done + outc
     end do
     call check(all(r == MPI_REQUEST_NULL), 93)

     ! REQUEST_GET_STATUS, REQUEST_FREE and TEST on single fakes
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 10, comm, r(1), ierr)
     call skip()
     call MPI_ISEND(fake_out, 8, MPI_DOUBLE_PRECISION, peer, 10, comm, r(2), ierr)
     call MPI_REQUEST_GET_STATUS(r(1), flag, st(:, 1), ierr)
     if (skipping) call check(flag .and. st(MPI_TAG, 1) == 10 .and. &
          r(1) /= MPI_REQUEST_NULL, 102)
     call MPI_REQUEST_FREE(r(2), ierr)
     call check(r(2) == MPI_REQUEST_NULL, 104)
     flag = .false.
     do while (.not. flag)
        call MPI_TEST(r(1), flag, st(:, 1), ierr)
     end do
     call check(r(1) == MPI_REQUEST_NULL .and. st(MPI_TAG, 1) == 10, 109)

     ! CANCEL: a receive nothing matches (a fake one completes, not cancelled)
     call skip()
     call MPI_IRECV(fake_in, 8, MPI_DOUBLE_PRECISION, peer, 12, comm, r(1), ierr)
     call MPI_CANCEL(r(1), ierr)
     call MPI_WAIT(r(1), MPI_STATUS_IGNORE, ierr)
     call check(r(1) == MPI_REQUEST_NULL, 115)

     ! blocking receives, a collective that writes nothing, a nonblocking collective
     call skip()
     call MPI_SENDRECV(fake_out, 4, MPI_DOUBLE_PRECISION, peer, 11, fake_in, 4, &
          MPI_DOUBLE_PRECISION, peer, 11, comm, st(:, 1), ierr)
     call MPI_GET_COUNT(st(:, 1), MPI_DOUBLE_PRECISION, n, ierr)
     call check(st(MPI_SOURCE, 1) == peer .and. st(MPI_TAG, 1) == 11 .and. n == 4, 122)
     mine = 1
     total = -1
     call skip()
     call MPI_ALLREDUCE(mine, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
     if (skipping) call check(total == -1 .and. ierr == MPI_SUCCESS, 127)
     call skip()
     call MPI_IBARRIER(comm, r(1), ierr)
     call MPI_WAIT(r(1), MPI_STATUS_IGNORE, ierr)
     call check(r(1) == MPI_REQUEST_NULL, 131)
  end do
  write(*, '(A,I0,A,I0)') 'RESULT rank=', rank, ' failures=', failures
  call MPI_FINALIZE(ierr)

contains

  subroutine skip()
    if (skipping) call skip_next_call()
  end subroutine skip

  subroutine check(ok, line)
    logical, intent(in) :: ok
    integer, intent(in) :: line
    if (.not. ok) then
       write(*, '(A,I0,A,I0)') 'FAIL rank ', rank, ' line ', line
       failures = failures + 1
    end if
  end subroutine check
end program fakes_f
