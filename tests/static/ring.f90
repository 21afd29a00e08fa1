! ring.f90 - Fortran (`use mpi`) ring: a loop of Sendrecv, every second iteration a call to a
! subroutine in which an Allreduce runs.
program fring
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, left, right, val, recvd, total
  integer :: status(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  val = rank
  total = 0
  do i = 1, 4
    call MPI_Sendrecv(val, 1, MPI_INTEGER, right, 0, recvd, 1, MPI_INTEGER, left, 0, &
                      MPI_COMM_WORLD, status, ierr)
    val = recvd + i
    if (mod(i, 2) == 0) then
      call reduce_step(val, total)
    end if
  end do
  if (rank == 0) print '(a,i0)', 'total ', total
  call MPI_Finalize(ierr)
end program fring

subroutine reduce_step(v, t)
  use mpi
  implicit none
  integer :: v, t, ierr
  call MPI_Allreduce(v, t, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
end subroutine reduce_step
