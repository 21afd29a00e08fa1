! jacobi.f90 - jacobi.c in Fortran with array syntax (what flang's own front-end
! optimisations handle): the untraced speed of a `conifer fc` build against
! plain flang-new-19's. Usage: jacobi_f [sweeps]
program jacobi_f
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 400
  integer :: ierr, rank, sweeps, s, i, j, ios
  double precision, allocatable :: u(:,:), v(:,:)
  double precision :: local, total
  character(len=32) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  sweeps = 400
  if (command_argument_count() >= 1) then
     call get_command_argument(1, arg)
     read(arg, *, iostat=ios) sweeps
  end if
  allocate(u(0:n+1, 0:n+1), v(0:n+1, 0:n+1))
  u = 0d0
  v = 0d0
  u(0, :) = 1d0
  do s = 1, sweeps
     do j = 1, n
        do i = 1, n
           v(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
        end do
     end do
     u(1:n, 1:n) = v(1:n, 1:n)
     local = sum(abs(v(1:n, 1:n)))
     call MPI_ALLREDUCE(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0) print '(A,F12.6)', 'residual ', total
  call MPI_FINALIZE(ierr)
end program jacobi_f
