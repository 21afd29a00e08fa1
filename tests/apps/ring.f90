! ring.f90 - Fortran (mpif.h) version of ring.c: pass a value around a ring
! with MPI_SENDRECV, v = mod(received*31 + rank + 1, 1000003) each iteration.
! Same RESULT line as ring.c.
program ring_f
  implicit none
  include 'mpif.h'
  integer, parameter :: NC = 5
  integer, parameter :: C_COMM_RANK = 1, C_COMM_SIZE = 2, C_FINALIZE = 3, C_INIT = 4, C_SENDRECV = 5
  character(len=16), parameter :: cname(NC) = [character(len=16) :: &
       'MPI_Comm_rank', 'MPI_Comm_size', 'MPI_Finalize', 'MPI_Init', 'MPI_Sendrecv']
  integer :: cnt(NC)
  integer :: ierr, rank, nprocs, iters, right, left, it, r, k, ios
  integer :: status(MPI_STATUS_SIZE)
  integer(8) :: v, w, vsum, refsum, ref
  integer(8), allocatable :: a(:), b(:)
  character(len=32) :: arg
  logical :: fail

  cnt = 0
  cnt(C_INIT) = cnt(C_INIT) + 1
  call MPI_INIT(ierr)
  cnt(C_COMM_RANK) = cnt(C_COMM_RANK) + 1
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  cnt(C_COMM_SIZE) = cnt(C_COMM_SIZE) + 1
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  iters = 20
  if (command_argument_count() >= 1) then
     call get_command_argument(1, arg)
     read(arg, *, iostat=ios) k
     if (ios == 0 .and. k > 0) iters = k
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  v = rank + 1
  w = 0
  vsum = 0
  do it = 1, iters
     cnt(C_SENDRECV) = cnt(C_SENDRECV) + 1
     call MPI_SENDRECV(v, 1, MPI_INTEGER8, right, 7, w, 1, MPI_INTEGER8, left, 7, &
          MPI_COMM_WORLD, status, ierr)
     v = mod(w * 31 + rank + 1, 1000003_8)
     vsum = vsum + w
  end do

  ! serial reference
  allocate(a(0:nprocs-1), b(0:nprocs-1))
  do r = 0, nprocs - 1
     a(r) = r + 1
  end do
  refsum = 0
  do it = 1, iters
     refsum = refsum + a(left)
     do r = 0, nprocs - 1
        b(r) = mod(a(mod(r + nprocs - 1, nprocs)) * 31 + r + 1, 1000003_8)
     end do
     a = b
  end do
  ref = a(rank)
  fail = (ref /= v) .or. (refsum /= vsum)
  deallocate(a, b)

  cnt(C_FINALIZE) = cnt(C_FINALIZE) + 1
  call MPI_FINALIZE(ierr)
  if (fail) then
     write(*, '(A,I0,A,I0,A,I0,A,I0,A,I0)') 'RESULT rank=', rank, ' FAIL value=', v, ' sum=', vsum, &
          ' expected value=', ref, ' sum=', refsum
  else
     write(*, '(A,I0,A,I0,A,I0,A,I0,A,I0)') 'RESULT rank=', rank, ' size=', nprocs, ' iters=', iters, &
          ' value=', v, ' sum=', vsum
  end if
  flush(6)
  do k = 1, NC
     if (cnt(k) > 0) then
        write(*, '(A,I0,A,A,A,I0)') 'COUNT rank=', rank, ' ', trim(cname(k)), ' ', cnt(k)
        flush(6)
     end if
  end do
  if (fail) stop 1
end program ring_f
