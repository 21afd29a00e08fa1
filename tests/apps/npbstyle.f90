! npbstyle.f90 - a small Fortran MPI code written the way the NAS Parallel Benchmarks are
! (mpif.h): module arrays allocated at start-up and passed as assumed-shape dummies down a call
! chain (solve -> relax -> residual), a COMMON block of timer state, MPI_WTIME timers and
! formatted output around the loops, and a residual norm reduced with MPI_ALLREDUCE every
! iteration while the iteration count is fixed by the input (the first argument, 10 if none).
!
! A 1D decomposition of an NX x NY grid along y over a ring of ranks. Per iteration:
! exchange: 2 MPI_IRECV + 2 MPI_ISEND of boundary rows, MPI_WAITALL; relax (a Jacobi sweep)
! with fourth-order dissipation and residual on the interior; MPI_ALLREDUCE of the residual's squared norm, printed by rank
! 0 every 5th iteration. Once, after the loop: MPI_REDUCE (max) of the elapsed time; the
! error against the exact solution (as NPB's error.f) and a checksum, checked against a table
! of reference values (as NPB's verify) and printed by rank 0. Nothing the program computes
! decides its communication.
module npb_fields
  implicit none
  integer, parameter :: NX = 48, NY = 32
  double precision, allocatable :: u(:, :), unew(:, :), f(:, :), res(:, :)
  double precision :: coef(5)
  integer :: me, np, up, down, niter
end module npb_fields

module npb_kernels
  use npb_fields
  implicit none
  include 'mpif.h'
contains

  subroutine timer_start()
    double precision :: t0, elapsed
    common /npbtime/ t0, elapsed
    t0 = mpi_wtime()
  end subroutine timer_start

  subroutine timer_stop()
    double precision :: t0, elapsed
    common /npbtime/ t0, elapsed
    elapsed = elapsed + (mpi_wtime() - t0)
  end subroutine timer_stop

  ! The right-hand side and the start field: smooth functions of the global position.
  subroutine init_fields(v, rhs)
    double precision, intent(out) :: v(0:, 0:), rhs(:, :)
    integer :: i, j
    double precision :: x, y
    coef = [0.25d0, 0.25d0, 0.25d0, 0.25d0, 1.0d-3]
    v = 0d0
    do j = 1, NY
      y = dble(me * NY + j) / dble(np * NY + 1)
      do i = 1, NX
        x = dble(i) / dble(NX + 1)
        rhs(i, j) = sin(3.14159265358979d0 * x) * cos(2.0d0 * y) + x * y
        v(i, j) = exp(-x) * (1d0 - y) + 0.5d0 * rhs(i, j)
      end do
    end do
  end subroutine init_fields

  ! Boundary rows to the neighbours, halo rows from them.
  subroutine exchange(v)
    double precision, intent(inout) :: v(0:, 0:)
    integer :: req(4), ierr
    call mpi_irecv(v(1, 0), NX, MPI_DOUBLE_PRECISION, down, 1, MPI_COMM_WORLD, req(1), ierr)
    call mpi_irecv(v(1, NY + 1), NX, MPI_DOUBLE_PRECISION, up, 2, MPI_COMM_WORLD, req(2), ierr)
    call mpi_isend(v(1, NY), NX, MPI_DOUBLE_PRECISION, up, 1, MPI_COMM_WORLD, req(3), ierr)
    call mpi_isend(v(1, 1), NX, MPI_DOUBLE_PRECISION, down, 2, MPI_COMM_WORLD, req(4), ierr)
    call mpi_waitall(4, req, MPI_STATUSES_IGNORE, ierr)
  end subroutine exchange

  ! The residual r = f - A v of the 5-point operator on the interior.
  subroutine residual(v, rhs, r)
    double precision, intent(in) :: v(0:, 0:), rhs(:, :)
    double precision, intent(out) :: r(:, :)
    integer :: i, j
    do j = 1, NY
      do i = 1, NX
        r(i, j) = rhs(i, j) - (v(i, j) - coef(1) * v(i - 1, j) - coef(2) * v(i + 1, j) &
             - coef(3) * v(i, j - 1) - coef(4) * v(i, j + 1))
      end do
    end do
  end subroutine residual

  ! Fourth-order dissipation of the field on the interior, away from the halo (NPB's rhs.f
  ! adds such terms to its right-hand sides), in d.
  subroutine dissipation(v, d)
    double precision, intent(in) :: v(0:, 0:)
    double precision, intent(out) :: d(:, :)
    integer :: i, j
    double precision :: dx, dy, eps
    eps = 1.0d-4
    d = 0d0
    do j = 2, NY - 1
      do i = 2, NX - 1
        dx = v(i - 2 + 1, j) - 4d0 * v(i - 1, j) + 6d0 * v(i, j) - 4d0 * v(i + 1, j)
        dy = v(i, j - 2 + 1) - 4d0 * v(i, j - 1) + 6d0 * v(i, j) - 4d0 * v(i, j + 1)
        if (i > 2 .and. i < NX - 1) dx = dx + v(i - 2, j) + v(i + 2, j) - v(i - 1, j) - v(i + 1, j)
        if (j > 2 .and. j < NY - 1) dy = dy + v(i, j - 2) + v(i, j + 2) - v(i, j - 1) - v(i, j + 1)
        d(i, j) = -eps * (dx + dy)
      end do
    end do
    do j = 1, NY
      d(1, j) = -eps * (5d0 * v(1, j) - 4d0 * v(2, j) + v(3, j))
      d(NX, j) = -eps * (5d0 * v(NX, j) - 4d0 * v(NX - 1, j) + v(NX - 2, j))
    end do
  end subroutine dissipation

  ! A damped Jacobi sweep with dissipation, then the residual of the new field.
  subroutine relax(v, vn, rhs, r)
    double precision, intent(inout) :: v(0:, 0:), vn(:, :)
    double precision, intent(in) :: rhs(:, :)
    double precision, intent(out) :: r(:, :)
    integer :: i, j
    do j = 1, NY
      do i = 1, NX
        vn(i, j) = (1d0 - coef(5)) * v(i, j) + coef(5) * (rhs(i, j) + coef(1) * v(i - 1, j) &
             + coef(2) * v(i + 1, j) + coef(3) * v(i, j - 1) + coef(4) * v(i, j + 1))
      end do
    end do
    call dissipation(v, r)
    v(1:NX, 1:NY) = vn + r
    call residual(v, rhs, r)
  end subroutine relax

  ! One iteration: halo exchange, sweep, global residual norm (squared).
  double precision function solve_step(v, vn, rhs, r)
    double precision, intent(inout) :: v(0:, 0:), vn(:, :)
    double precision, intent(in) :: rhs(:, :)
    double precision, intent(out) :: r(:, :)
    double precision :: local
    integer :: ierr
    call exchange(v)
    call relax(v, vn, rhs, r)
    local = sum(r * r)
    call mpi_allreduce(local, solve_step, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end function solve_step

  ! The exact solution at a grid point: what the iteration tends to (NPB's exact.f).
  subroutine exact(i, j, e)
    integer, intent(in) :: i, j
    double precision, intent(out) :: e(3)
    double precision :: x, y
    x = dble(i) / dble(NX + 1)
    y = dble(me * NY + j) / dble(np * NY + 1)
    e(1) = exp(-x) * (1d0 - y) + x * y * (1d0 - x)
    e(2) = sin(3.14159265358979d0 * x) * cos(2.0d0 * y) + x * x - y * y
    e(3) = e(1) * e(2) + sqrt(1d0 + x * x + y * y)
  end subroutine exact

  ! The RMS error of the field against the exact solution, per component (NPB's error.f).
  subroutine error_norm(v, rms)
    double precision, intent(in) :: v(0:, 0:)
    double precision, intent(out) :: rms(3)
    double precision :: e(3), d
    integer :: i, j, m
    rms = 0d0
    do j = 1, NY
      do i = 1, NX
        call exact(i, j, e)
        do m = 1, 3
          d = v(i, j) * dble(m) - e(m)
          rms(m) = rms(m) + d * d
        end do
      end do
    end do
    rms = sqrt(rms / dble(NX * NY))
  end subroutine error_norm

  ! Compares the checksum and errors with the reference values of the known configurations
  ! (NPB's verify): a class letter, and whether they match within the tolerance.
  subroutine verify(cs, rms, class, verified)
    double precision, intent(in) :: cs, rms(3)
    character, intent(out) :: class
    logical, intent(out) :: verified
    double precision :: ref_cs, ref_rms(3), epsilon
    integer :: m
    epsilon = 1.0d-8
    class = 'U'
    verified = .false.
    if (np == 4 .and. niter == 10) then
      class = 'S'
      ref_cs = 1.38255238d3
      ref_rms = [0.5d0, 1.2d0, 2.1d0]
    else if (np == 2 .and. niter == 3) then
      class = 'T'
      ref_cs = 6.9d2
      ref_rms = [0.5d0, 1.1d0, 2.0d0]
    else
      return
    end if
    verified = abs(cs - ref_cs) / ref_cs < 1d-6
    do m = 1, 3
      if (abs(rms(m) - ref_rms(m)) / ref_rms(m) > epsilon) verified = .false.
    end do
  end subroutine verify

end module npb_kernels

program npbstyle
  use npb_kernels
  implicit none
  integer :: it, ierr, ios
  double precision :: rnorm, tmax, checksum, t0, elapsed, rms(3)
  character(len=16) :: arg
  character :: class
  logical :: verified
  common /npbtime/ t0, elapsed

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  niter = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read(arg, *, iostat=ios) niter
    if (ios /= 0 .or. niter < 1) niter = 10
  end if
  up = mod(me + 1, np)
  down = mod(me + np - 1, np)
  allocate(u(0:NX + 1, 0:NY + 1), unew(NX, NY), f(NX, NY), res(NX, NY))
  call init_fields(u, f)
  if (me == 0) write(*, '(a, i3, a, i5, a)') ' npbstyle: ', np, ' ranks, ', niter, ' iterations'

  elapsed = 0d0
  call timer_start()
  do it = 1, niter
    rnorm = solve_step(u, unew, f, res)
    if (me == 0 .and. mod(it, 5) == 0) write(*, '(a, i5, es16.8)') ' iteration', it, sqrt(rnorm)
  end do
  call timer_stop()

  call mpi_reduce(elapsed, tmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  checksum = sum(u(1:NX, 1:NY))
  call error_norm(u, rms)
  call verify(checksum, rms, class, verified)
  if (me == 0) then
    write(*, '(a, es16.8, a, f10.4, a)') ' checksum', checksum, ' time', tmax, ' s'
    write(*, '(a, 3es16.8)') ' rms errors', rms
    write(*, '(a, a, a, l2)') ' class ', class, ' verified', verified
  end if
  deallocate(u, unew, f, res)
  call mpi_finalize(ierr)
end program npbstyle
