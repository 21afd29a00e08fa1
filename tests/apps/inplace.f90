! inplace.f90 - Fortran (mpif.h) reductions with MPI_IN_PLACE: each iteration
! every rank sets x = rank + it and calls MPI_ALLREDUCE(MPI_IN_PLACE, x, ...,
! MPI_SUM); the sum over ranks is checked against size*(size-1)/2 + size*it.
! Per iteration: 1 MPI_Allreduce.
program inplace_f
  implicit none
  include 'mpif.h'
  integer, parameter :: NC = 5
  integer, parameter :: C_ALLREDUCE = 1, C_COMM_RANK = 2, C_COMM_SIZE = 3, C_FINALIZE = 4, C_INIT = 5
  character(len=16), parameter :: cname(NC) = [character(len=16) :: &
       'MPI_Allreduce', 'MPI_Comm_rank', 'MPI_Comm_size', 'MPI_Finalize', 'MPI_Init']
  integer :: cnt(NC)
  integer :: ierr, rank, nprocs, iters, it, k, ios, x, total
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

  fail = .false.
  total = 0
  do it = 1, iters
     x = rank + it
     cnt(C_ALLREDUCE) = cnt(C_ALLREDUCE) + 1
     call MPI_ALLREDUCE(MPI_IN_PLACE, x, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
     if (x /= nprocs * (nprocs - 1) / 2 + nprocs * it) fail = .true.
     total = total + x
  end do

  cnt(C_FINALIZE) = cnt(C_FINALIZE) + 1
  call MPI_FINALIZE(ierr)
  if (fail) then
     write(*, '(A,I0,A)') 'RESULT rank=', rank, ' FAIL wrong in-place sum'
  else
     write(*, '(A,I0,A,I0,A,I0)') 'RESULT rank=', rank, ' iters=', iters, ' total=', total
  end if
  flush(6)
  do k = 1, NC
     if (cnt(k) > 0) then
        write(*, '(A,I0,A,A,A,I0)') 'COUNT rank=', rank, ' ', trim(cname(k)), ' ', cnt(k)
        flush(6)
     end if
  end do
  if (fail) stop 1
end program inplace_f
