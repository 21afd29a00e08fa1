! sections.f90 - Fortran (mpif.h) halo exchange written the way benchmark
! codes pass buffers: array elements, contiguous and non-contiguous array
! sections (which the compiler may copy into temporaries), automatic arrays of
! subroutines, module arrays (static and allocatable) and local scalars, from
! subroutines called at different stack depths.
!
! A 2D periodic grid of NX x NY points per rank on an MPI_DIMS_CREATE process
! grid, neighbours by modular arithmetic. Per iteration:
!   exchange_y: 2 IRECV into elements v(1,0), v(1,NY+1) + 2 ISEND of the
!     contiguous sections v(1:NX,1), v(1:NX,NY) of an assumed-shape dummy,
!     WAITALL (contiguous columns)
!   exchange_x: SENDRECV of the non-contiguous row section v(1,1:NY) into an
!     automatic array, then SENDRECV of an automatic array packed from row NX
!     into the same automatic array (rows)
!   stencil update, then gnorm: ALLREDUCE of a local scalar (called from the
!     main program, and every 5th iteration also from report -> gnorm, one
!     level deeper), and ALLREDUCE of an allocatable module array into another
!   vcycle: a multigrid-like V-cycle over 4 levels (8x8 down to 1x1 blocks in
!     one module array): comm_level SENDRECVs a row packed into an automatic
!     array into another automatic array, called going down from smooth or
!     relax (below their automatic work arrays; which one depends on the level
!     and the rank's column), and directly from vcycle going up
! Once: BCAST of a static module array from rank 0 before the loop, REDUCE of
! a local scalar to rank 0 after it.
! Values are integers mod a prime held in doubles (exact); every rank reruns
! the iterations serially on the global grid and checks its block and every
! norm.
module sections_data
  implicit none
  integer, parameter :: NX = 8, NY = 6
  integer(8), parameter :: PMOD = 1000003_8
  ! counters, one per MPI function, in C-name sorted order
  integer, parameter :: NC = 12
  integer, parameter :: C_ALLREDUCE = 1, C_BCAST = 2, C_COMM_RANK = 3, C_COMM_SIZE = 4, &
       C_DIMS_CREATE = 5, C_FINALIZE = 6, C_INIT = 7, C_IRECV = 8, C_ISEND = 9, C_REDUCE = 10, &
       C_SENDRECV = 11, C_WAITALL = 12
  character(len=20), parameter :: cname(NC) = [character(len=20) :: &
       'MPI_Allreduce', 'MPI_Bcast', 'MPI_Comm_rank', 'MPI_Comm_size', 'MPI_Dims_create', &
       'MPI_Finalize', 'MPI_Init', 'MPI_Irecv', 'MPI_Isend', 'MPI_Reduce', 'MPI_Sendrecv', &
       'MPI_Waitall']
  integer :: cnt(NC) = 0
  integer :: rank, nprocs, dims(2), px, py, west, east, south, north
  ! static module arrays
  double precision :: u(0:NX+1, 0:NY+1), un(NX, NY)
  integer :: coef(3)
  ! the level grids of vcycle, one after the other in the same storage (sequence association)
  integer, parameter :: LEVELS = 4
  double precision :: lv(0:(NX + 2)**2 - 1)
  integer :: level_bad = 0
  ! allocatable module arrays
  double precision, allocatable :: stats(:), gstats(:)
end module sections_data

module sections_comm
  use sections_data
  implicit none
  include 'mpif.h'
contains

  ! Contiguous columns: receives into elements, sends of sections of an assumed-shape dummy.
  subroutine exchange_y(v)
    double precision, intent(inout) :: v(0:, 0:)
    integer :: req(4), ierr
    cnt(C_IRECV) = cnt(C_IRECV) + 2
    call MPI_IRECV(v(1, 0), NX, MPI_DOUBLE_PRECISION, south, 1, MPI_COMM_WORLD, req(1), ierr)
    call MPI_IRECV(v(1, NY + 1), NX, MPI_DOUBLE_PRECISION, north, 2, MPI_COMM_WORLD, req(2), ierr)
    cnt(C_ISEND) = cnt(C_ISEND) + 2
    call MPI_ISEND(v(1:NX, NY), NX, MPI_DOUBLE_PRECISION, north, 1, MPI_COMM_WORLD, req(3), ierr)
    call MPI_ISEND(v(1:NX, 1), NX, MPI_DOUBLE_PRECISION, south, 2, MPI_COMM_WORLD, req(4), ierr)
    cnt(C_WAITALL) = cnt(C_WAITALL) + 1
    call MPI_WAITALL(4, req, MPI_STATUSES_IGNORE, ierr)
  end subroutine exchange_y

  ! Non-contiguous rows: a row section sent as it is, and a row packed by hand; both
  ! received into an automatic array.
  subroutine exchange_x(v, nx1, ny1)
    integer, intent(in) :: nx1, ny1
    double precision, intent(inout) :: v(0:nx1 + 1, 0:ny1 + 1)
    double precision :: buf(ny1), rb(ny1)
    integer :: status(MPI_STATUS_SIZE), ierr
    cnt(C_SENDRECV) = cnt(C_SENDRECV) + 2
    call MPI_SENDRECV(v(1, 1:ny1), ny1, MPI_DOUBLE_PRECISION, west, 3, rb(1:ny1), ny1, &
         MPI_DOUBLE_PRECISION, east, 3, MPI_COMM_WORLD, status, ierr)
    v(nx1 + 1, 1:ny1) = rb
    buf = v(nx1, 1:ny1)
    call MPI_SENDRECV(buf(1:ny1), ny1, MPI_DOUBLE_PRECISION, east, 4, rb(1:ny1), ny1, &
         MPI_DOUBLE_PRECISION, west, 4, MPI_COMM_WORLD, status, ierr)
    v(0, 1:ny1) = rb
  end subroutine exchange_x

  ! The global sum of the block (a local scalar reduced into another), and the global
  ! per-column sums of the first row (allocatable module arrays, passed by their first
  ! element as codes do where a scalar is reduced through the same implicit interface).
  double precision function gnorm(v)
    double precision, intent(in) :: v(0:, 0:)
    double precision :: lsum, gsum
    integer :: ierr
    lsum = sum(v(1:NX, 1:NY))
    cnt(C_ALLREDUCE) = cnt(C_ALLREDUCE) + 2
    call MPI_ALLREDUCE(lsum, gsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    stats = v(1, 1:NY)
    call MPI_ALLREDUCE(stats(1), gstats(1), NY, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    gnorm = gsum
  end function gnorm

  ! The norm once more, from one call deeper.
  subroutine report(v, norm)
    double precision, intent(in) :: v(0:, 0:)
    double precision, intent(out) :: norm
    norm = gnorm(v)
  end subroutine report

  ! The value a rank puts at (i, j) of level l in iteration it.
  integer function level_value(r, l, it, i, j)
    integer, intent(in) :: r, l, it, i, j
    level_value = r * 1000 + l * 100 + i * 10 + j + it
  end function level_value

  ! One level of a multigrid-like cycle on an n x n block (tag: the level): the first row
  ! packed into an automatic array and sent west, the east neighbour's received into another
  ! automatic array and checked.
  subroutine comm_level(v, n, tag, it)
    integer, intent(in) :: n, tag, it
    double precision, intent(inout) :: v(0:n + 1, 0:n + 1)
    double precision :: sb(n), rb(n)
    integer :: status(MPI_STATUS_SIZE), ierr, j
    sb = v(1, 1:n)
    cnt(C_SENDRECV) = cnt(C_SENDRECV) + 1
    call MPI_SENDRECV(sb(1:n), n, MPI_DOUBLE_PRECISION, west, tag, rb(1:n), n, MPI_DOUBLE_PRECISION, &
         east, tag, MPI_COMM_WORLD, status, ierr)
    v(n + 1, 1:n) = rb
    do j = 1, n
       if (rb(j) /= dble(level_value(east, tag, it, 1, j))) level_bad = 1
    end do
  end subroutine comm_level

  ! Smoothing on a level: fills the level, keeps a copy in an automatic work array of the
  ! level's size, exchanges, and checks the copy survived.
  subroutine smooth(v, n, tag, it)
    integer, intent(in) :: n, tag, it
    double precision, intent(inout) :: v(0:n + 1, 0:n + 1)
    double precision :: w(n, n)
    integer :: i, j
    do j = 1, n
       do i = 1, n
          w(i, j) = dble(level_value(rank, tag, it, i, j))
       end do
    end do
    v(1:n, 1:n) = w
    call comm_level(v, n, tag, it)
    if (any(v(1:n, 1:n) /= w)) level_bad = 1
  end subroutine smooth

  ! smooth with a work array of another shape (and a second one): what ranks whose block
  ! needs other work before the exchange run instead.
  subroutine relax(v, n, tag, it)
    integer, intent(in) :: n, tag, it
    double precision, intent(inout) :: v(0:n + 1, 0:n + 1)
    double precision :: w(n + 1, n), d(2 * n)
    integer :: i, j
    do j = 1, n
       do i = 1, n
          w(i, j) = dble(level_value(rank, tag, it, i, j))
       end do
       d(j) = w(1, j)
    end do
    v(1:n, 1:n) = w(1:n, 1:n)
    call comm_level(v, n, tag, it)
    if (any(v(1:n, 1:n) /= w(1:n, 1:n)) .or. any(v(1, 1:n) /= d(1:n))) level_bad = 1
  end subroutine relax

  ! A V-cycle over LEVELS levels: down through smooth or relax, alternating with the rank's
  ! column and the level (comm_level one call deeper, below their work arrays), then back up
  ! calling comm_level directly, the coarsest level both ways. Every level exchanges with the
  ! same tag (its number) both ways.
  subroutine vcycle(it)
    integer, intent(in) :: it
    integer :: l, n, i, j
    do l = 1, LEVELS
       if (mod(px + l, 2) == 0) then
          call smooth(lv, NX / 2**(l - 1), l, it)
       else
          call relax(lv, NX / 2**(l - 1), l, it)
       end if
    end do
    do l = LEVELS, 1, -1
       n = NX / 2**(l - 1)
       do j = 1, n
          do i = 1, n
             lv(i + (n + 2) * j) = dble(level_value(rank, l, it, i, j))
          end do
       end do
       call comm_level(lv, n, l, it)
    end do
  end subroutine vcycle

end module sections_comm

program sections_f
  use sections_comm
  implicit none
  integer :: ierr, iters, it, i, j, k, ios, bad
  integer(8) :: gx, gy, gi, gj
  double precision :: norm, norm2, total, v
  double precision, allocatable :: g(:,:), gn(:,:), refnorm(:)
  character(len=32) :: arg

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

  dims = 0
  cnt(C_DIMS_CREATE) = cnt(C_DIMS_CREATE) + 1
  call MPI_DIMS_CREATE(nprocs, 2, dims, ierr)
  px = rank / dims(2)
  py = mod(rank, dims(2))
  west = modulo(px - 1, dims(1)) * dims(2) + py
  east = modulo(px + 1, dims(1)) * dims(2) + py
  south = px * dims(2) + modulo(py - 1, dims(2))
  north = px * dims(2) + modulo(py + 1, dims(2))

  if (rank == 0) coef = [7, 131, 17]
  cnt(C_BCAST) = cnt(C_BCAST) + 1
  call MPI_BCAST(coef, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  allocate(stats(NY), gstats(NY))

  u = 0d0
  do j = 1, NY
     do i = 1, NX
        gi = int(px, 8) * NX + i - 1
        gj = int(py, 8) * NY + j - 1
        u(i, j) = dble(mod(gi * coef(2) + gj * coef(3) + coef(1), PMOD))
     end do
  end do

  ! serial reference on the global periodic grid
  gx = int(dims(1), 8) * NX
  gy = int(dims(2), 8) * NY
  allocate(g(0:gx+1, 0:gy+1), gn(gx, gy), refnorm(iters))
  g = 0d0
  do gj = 1, gy
     do gi = 1, gx
        g(gi, gj) = dble(mod((gi - 1) * coef(2) + (gj - 1) * coef(3) + coef(1), PMOD))
     end do
  end do
  do it = 1, iters
     g(1:gx, 0) = g(1:gx, gy)
     g(1:gx, gy + 1) = g(1:gx, 1)
     g(0, 1:gy) = g(gx, 1:gy)
     g(gx + 1, 1:gy) = g(1, 1:gy)
     do gj = 1, gy
        do gi = 1, gx
           v = 2d0 * g(gi, gj) + g(gi - 1, gj) + g(gi + 1, gj) + g(gi, gj - 1) + g(gi, gj + 1) + 1d0
           gn(gi, gj) = dble(mod(int(v, 8), PMOD))
        end do
     end do
     g(1:gx, 1:gy) = gn
     refnorm(it) = sum(gn)
  end do

  bad = 0
  total = 0d0
  norm = 0d0
  do it = 1, iters
     call exchange_y(u)
     call exchange_x(u, NX, NY)
     do j = 1, NY
        do i = 1, NX
           v = 2d0 * u(i, j) + u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) + 1d0
           un(i, j) = dble(mod(int(v, 8), PMOD))
        end do
     end do
     u(1:NX, 1:NY) = un
     norm = gnorm(u)
     if (norm /= refnorm(it)) bad = 1
     if (mod(it, 5) == 0) then
        call report(u, norm2)
        if (norm2 /= norm) bad = 1
     end if
     call vcycle(it)
  end do
  do j = 1, NY
     do i = 1, NX
        if (u(i, j) /= g(int(px, 8) * NX + i, int(py, 8) * NY + j)) bad = 1
     end do
  end do
  do j = 1, NY
     if (gstats(j) /= sum(g(1:gx:NX, j:gy:NY))) bad = 1
  end do
  norm2 = sum(u(1:NX, 1:NY))
  cnt(C_REDUCE) = cnt(C_REDUCE) + 1
  call MPI_REDUCE(norm2, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total /= refnorm(iters)) bad = 1
  if (level_bad /= 0) bad = 1

  cnt(C_FINALIZE) = cnt(C_FINALIZE) + 1
  call MPI_FINALIZE(ierr)

  if (bad /= 0) then
     write(*, '(A,I0,A,I0,A,I0,A)') 'RESULT rank=', rank, ' FAIL block (', px, ',', py, &
          ') or a norm differs from the serial reference'
  else
     write(*, '(A,I0,A,I0,A,I0,A,I0,A,I0)') 'RESULT rank=', rank, ' dims=', dims(1), 'x', dims(2), &
          ' iters=', iters, ' norm=', int(norm, 8)
  end if
  flush(6)
  do k = 1, NC
     if (cnt(k) > 0) then
        write(*, '(A,I0,A,A,A,I0)') 'COUNT rank=', rank, ' ', trim(cname(k)), ' ', cnt(k)
        flush(6)
     end if
  end do
  if (bad /= 0) stop 1
end program sections_f
