! stencil2d08.f90 - stencil2d.f90 written against the Fortran 2008 bindings
! (`use mpi_f08`): handles are derived types (type(MPI_Request), MPI_COMM_WORLD
! of type(MPI_Comm)), WAITALL fills an array of type(MPI_Status), and `ierror`
! is given on some calls and left out on others. Same problem, RESULT and
! COUNT lines as stencil2d.f90.
program stencil2d08_f
  use mpi_f08
  implicit none
  integer, parameter :: NX = 8, NY = 8, NMAX = 8
  integer(8), parameter :: PMOD = 1000003_8
  ! counters, one per MPI function, in C-name sorted order
  integer, parameter :: NC = 9
  integer, parameter :: C_ALLREDUCE = 1, C_COMM_RANK = 2, C_COMM_SIZE = 3, &
       C_DIMS_CREATE = 4, C_FINALIZE = 5, C_INIT = 6, C_IRECV = 7, C_ISEND = 8, C_WAITALL = 9
  character(len=20), parameter :: cname(NC) = [character(len=20) :: &
       'MPI_Allreduce', 'MPI_Comm_rank', 'MPI_Comm_size', 'MPI_Dims_create', &
       'MPI_Finalize', 'MPI_Init', 'MPI_Irecv', 'MPI_Isend', 'MPI_Waitall']
  integer :: cnt(NC)

  integer :: ierr, rank, nprocs, iters, dims(2), px, py, nb(4), lens(4)
  type(MPI_Request) :: req(8)
  type(MPI_Status) :: statuses(8)
  integer :: i, j, d, it, nargs, ios, bad, k
  integer(8) :: gx, gy, gi, gj
  double precision :: u(0:NX+1, 0:NY+1), un(NX, NY)
  double precision :: sbuf(NMAX, 4), rbuf(NMAX, 4), lsum, gsum, refsum, v
  double precision, allocatable :: g(:,:), gn(:,:)
  character(len=32) :: arg

  cnt = 0
  cnt(C_INIT) = cnt(C_INIT) + 1
  call MPI_Init()
  cnt(C_COMM_RANK) = cnt(C_COMM_RANK) + 1
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  cnt(C_COMM_SIZE) = cnt(C_COMM_SIZE) + 1
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  iters = 20
  nargs = command_argument_count()
  if (nargs >= 1) then
     call get_command_argument(1, arg)
     read(arg, *, iostat=ios) k
     if (ios == 0 .and. k > 0) iters = k
  end if

  dims = 0
  cnt(C_DIMS_CREATE) = cnt(C_DIMS_CREATE) + 1
  call MPI_Dims_create(nprocs, 2, dims)
  px = rank / dims(2)
  py = mod(rank, dims(2))
  ! direction d: 1 = -x, 2 = +x, 3 = -y, 4 = +y  (C: d-1)
  nb = MPI_PROC_NULL
  if (px > 0) nb(1) = rank - dims(2)
  if (px < dims(1) - 1) nb(2) = rank + dims(2)
  if (py > 0) nb(3) = rank - 1
  if (py < dims(2) - 1) nb(4) = rank + 1
  lens = [NY, NY, NX, NX]

  u = 0d0
  sbuf = 0d0
  rbuf = 0d0
  do j = 1, NY
     do i = 1, NX
        gi = int(px, 8) * NX + i - 1
        gj = int(py, 8) * NY + j - 1
        u(i, j) = dble(mod(gi * 131 + gj * 17 + 7, PMOD))
     end do
  end do

  lsum = 0d0
  gsum = 0d0
  bad = 0
  do it = 1, iters
     sbuf(1:NY, 1) = u(1, 1:NY)
     sbuf(1:NY, 2) = u(NX, 1:NY)
     sbuf(1:NX, 3) = u(1:NX, 1)
     sbuf(1:NX, 4) = u(1:NX, NY)
     do d = 1, 4
        ! receive from neighbour d with tag of the opposite direction (C: (d-1) xor 1)
        cnt(C_IRECV) = cnt(C_IRECV) + 1
        call MPI_Irecv(rbuf(1, d), lens(d), MPI_DOUBLE_PRECISION, nb(d), ieor(d - 1, 1), &
             MPI_COMM_WORLD, req(d), ierr)
     end do
     do d = 1, 4
        cnt(C_ISEND) = cnt(C_ISEND) + 1
        call MPI_Isend(sbuf(1, d), lens(d), MPI_DOUBLE_PRECISION, nb(d), d - 1, &
             MPI_COMM_WORLD, req(4 + d))
     end do
     cnt(C_WAITALL) = cnt(C_WAITALL) + 1
     call MPI_Waitall(8, req, statuses, ierr)
     ! a receive from MPI_PROC_NULL completes with source MPI_PROC_NULL
     do d = 1, 4
        if (statuses(d)%MPI_SOURCE /= nb(d)) bad = 1
     end do
     ! PROC_NULL receives leave rbuf untouched (zero): the boundary value
     u(0, 1:NY) = rbuf(1:NY, 1)
     u(NX + 1, 1:NY) = rbuf(1:NY, 2)
     u(1:NX, 0) = rbuf(1:NX, 3)
     u(1:NX, NY + 1) = rbuf(1:NX, 4)
     lsum = 0d0
     do j = 1, NY
        do i = 1, NX
           v = 2d0 * u(i, j) + u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) + 1d0
           un(i, j) = dble(mod(int(v, 8), PMOD))
           lsum = lsum + un(i, j)
        end do
     end do
     u(1:NX, 1:NY) = un
     cnt(C_ALLREDUCE) = cnt(C_ALLREDUCE) + 1
     call MPI_Allreduce(lsum, gsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end do

  ! serial reference on the global grid
  gx = int(dims(1), 8) * NX
  gy = int(dims(2), 8) * NY
  allocate(g(0:gx+1, 0:gy+1), gn(0:gx+1, 0:gy+1))
  g = 0d0
  gn = 0d0
  do gj = 1, gy
     do gi = 1, gx
        g(gi, gj) = dble(mod((gi - 1) * 131 + (gj - 1) * 17 + 7, PMOD))
     end do
  end do
  refsum = 0d0
  do it = 1, iters
     refsum = 0d0
     do gj = 1, gy
        do gi = 1, gx
           v = 2d0 * g(gi, gj) + g(gi - 1, gj) + g(gi + 1, gj) + g(gi, gj - 1) + g(gi, gj + 1) + 1d0
           gn(gi, gj) = dble(mod(int(v, 8), PMOD))
           refsum = refsum + gn(gi, gj)
        end do
     end do
     g(1:gx, 1:gy) = gn(1:gx, 1:gy)
  end do
  do j = 1, NY
     do i = 1, NX
        if (u(i, j) /= g(int(px, 8) * NX + i, int(py, 8) * NY + j)) bad = 1
     end do
  end do
  deallocate(g, gn)

  cnt(C_FINALIZE) = cnt(C_FINALIZE) + 1
  call MPI_Finalize(ierr)

  if (bad /= 0) then
     write(*, '(A,I0,A,I0,A,I0,A)') 'RESULT rank=', rank, ' FAIL block (', px, ',', py, &
          ') differs from serial reference'
  else if (gsum /= refsum) then
     write(*, '(A,I0,A,I0,A,I0)') 'RESULT rank=', rank, ' FAIL global_sum ', int(gsum, 8), &
          ' != reference ', int(refsum, 8)
  else
     write(*, '(A,I0,A,I0,A,I0,A,I0,A,I0,A,I0)') 'RESULT rank=', rank, ' dims=', dims(1), 'x', dims(2), &
          ' iters=', iters, ' global_sum=', int(gsum, 8), ' local_sum=', int(lsum, 8)
  end if
  flush(6)
  do k = 1, NC
     if (cnt(k) > 0) then
        write(*, '(A,I0,A,A,A,I0)') 'COUNT rank=', rank, ' ', trim(cname(k)), ' ', cnt(k)
        flush(6)
     end if
  end do
  if (bad /= 0 .or. gsum /= refsum) stop 1
end program stencil2d08_f
