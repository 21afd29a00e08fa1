c     wavefront.f - the KBA transport sweep of wavefront.c in Fortran 77
c     (fixed form, mpif.h, a COMMON block for the input deck, one
c     work array carved into adjustable arrays as Sweep3D does).
c
c     Same algorithm, input deck and output as wavefront.c: rank 0
c     reads the deck (optional first argument) with a formatted READ and
c     broadcasts it; per iteration 8 octants of pipelined MPI_RECV /
c     sweep / MPI_SEND over z blocks, then MPI_ALLREDUCE(MAX) of the
c     flux change and the exit test
c       (err > epsi .and. epsi >= 0) .or.
c       (its < int(-epsi+.99) .and. epsi < 0)
c     (a tolerance >= 0 converges, a negative one runs exactly -epsi
c     iterations); at the end MPI_REDUCE of the flux total to rank 0.
      program wavefront
      implicit none
      include 'mpif.h'
      integer maxwrk
      parameter (maxwrk = 8000000)
      double precision work(maxwrk)
      integer nx, ny, nz, nang, nzb, maxits
      double precision epsi
      common /deck/ epsi, nx, ny, nz, nang, nzb, maxits
      integer rank, size, ierr, dims(2), pi, pj, x0, y0, nxl, nyl
      integer ncell, iphi, inew, isrc, isig, ipx, ipy, ipz, imu, ieta
      integer need
      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      call mpi_comm_size(MPI_COMM_WORLD, size, ierr)
      call rddeck(rank)
      dims(1) = 0
      dims(2) = 0
      call mpi_dims_create(size, 2, dims, ierr)
      pi = mod(rank, dims(1))
      pj = rank / dims(1)
      call share(nx, dims(1), pi, x0, nxl)
      call share(ny, dims(2), pj, y0, nyl)
      ncell = nxl * nyl * nz
      iphi = 1
      inew = iphi + ncell
      isrc = inew + ncell
      isig = isrc + ncell
      ipx = isig + ncell
      ipy = ipx + nyl * nzb * nang
      ipz = ipy + nxl * nzb * nang
      imu = ipz + nxl * nyl * nang
      ieta = imu + nang
      need = ieta + nang
      if (need .gt. maxwrk) then
         write (*, *) 'wavefront: the grid needs', need, 'words of',
     &        maxwrk
         call mpi_abort(MPI_COMM_WORLD, 2, ierr)
      end if
      call solve(rank, dims, pi, pj, x0, y0, nxl, nyl, work(iphi),
     &     work(inew), work(isrc), work(isig), work(ipx), work(ipy),
     &     work(ipz), work(imu), work(ieta))
      call mpi_finalize(ierr)
      end

c     Rank 0 reads the deck from the file named by the first argument
c     (the defaults stand without one); everyone gets it by MPI_BCAST.
      subroutine rddeck(rank)
      implicit none
      include 'mpif.h'
      integer rank
      integer nx, ny, nz, nang, nzb, maxits
      double precision epsi
      common /deck/ epsi, nx, ny, nz, nang, nzb, maxits
      integer ints(6), ierr, ios
      character*256 path
      nx = 24
      ny = 24
      nz = 24
      nang = 4
      nzb = 4
      epsi = -3.0d0
      maxits = 50
      if (rank .eq. 0 .and. command_argument_count() .ge. 1) then
         call get_command_argument(1, path)
         open (10, file=path, status='old', iostat=ios)
         if (ios .eq. 0) read (10, *, iostat=ios) nx, ny, nz, nang,
     &        nzb, epsi, maxits
         if (ios .ne. 0) then
            write (0, '(a,a)') 'wavefront: cannot read the input deck ',
     &           trim(path)
            call mpi_abort(MPI_COMM_WORLD, 2, ierr)
         end if
         close (10)
      end if
      ints(1) = nx
      ints(2) = ny
      ints(3) = nz
      ints(4) = nang
      ints(5) = nzb
      ints(6) = maxits
      call mpi_bcast(ints, 6, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      call mpi_bcast(epsi, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &     ierr)
      nx = ints(1)
      ny = ints(2)
      nz = ints(3)
      nang = ints(4)
      nzb = ints(5)
      maxits = ints(6)
      end

c     Cells lo .. lo+n-1 (0-based) of total split over parts, part p.
      subroutine share(total, parts, p, lo, n)
      implicit none
      integer total, parts, p, lo, n, base, extra
      base = total / parts
      extra = mod(total, parts)
      n = base
      if (p .lt. extra) n = n + 1
      lo = p * base + min(p, extra)
      end

c     The source iteration: sweeps until the exit test says stop, then
c     the flux total to rank 0.
      subroutine solve(rank, dims, pi, pj, x0, y0, nxl, nyl, phi,
     &     phinew, src, sigt, psix, psiy, psiz, mu, eta)
      implicit none
      include 'mpif.h'
      integer nx, ny, nz, nang, nzb, maxits
      double precision epsi
      common /deck/ epsi, nx, ny, nz, nang, nzb, maxits
      integer rank, dims(2), pi, pj, x0, y0, nxl, nyl
      double precision phi(nxl, nyl, nz), phinew(nxl, nyl, nz)
      double precision src(nxl, nyl, nz), sigt(nxl, nyl, nz)
      double precision psix(nang, nzb, nyl), psiy(nang, nzb, nxl)
      double precision psiz(nang, nxl, nyl), mu(nang), eta(nang)
      integer i, j, k, m, its, oct, ierr, iters
      double precision dx, dy, dz, w, err, change, rel, local, total
      double precision start
      do m = 1, nang
         mu(m) = dble(m) / (nang + 1.0d0)
         eta(m) = sqrt((1 - mu(m) * mu(m)) / 2)
      end do
      do k = 1, nz
         do j = 1, nyl
            do i = 1, nxl
               phi(i, j, k) = 0
               sigt(i, j, k) = 1.0d0 + 0.5d0 *
     &              mod((i-1+x0) + 2*(j-1+y0) + 3*(k-1), 3)
               src(i, j, k) = 0
               if (i-1+x0 .lt. nx/2 .and. j-1+y0 .lt. ny/2 .and.
     &              k-1 .lt. nz/2) src(i, j, k) = 1.0d0
            end do
         end do
      end do
      dx = 1.0d0 / nx
      dy = 1.0d0 / ny
      dz = 1.0d0 / nz
      w = 1.0d0 / (8.0d0 * nang)
      start = mpi_wtime()
      iters = maxits
      do its = 1, maxits
         do k = 1, nz
            do j = 1, nyl
               do i = 1, nxl
                  phinew(i, j, k) = 0
               end do
            end do
         end do
         do oct = 0, 7
            call octant(oct, dims, pi, pj, nxl, nyl, phi, phinew, src,
     &           sigt, psix, psiy, psiz, mu, eta, dx, dy, dz, w)
         end do
         change = 0
         do k = 1, nz
            do j = 1, nyl
               do i = 1, nxl
                  rel = abs(phinew(i, j, k) - phi(i, j, k))
                  if (abs(phinew(i, j, k)) .gt. 1d-30) then
                     rel = rel / abs(phinew(i, j, k))
                  end if
                  change = max(change, rel)
                  phi(i, j, k) = phinew(i, j, k)
               end do
            end do
         end do
         call mpi_allreduce(change, err, 1, MPI_DOUBLE_PRECISION,
     &        MPI_MAX, MPI_COMM_WORLD, ierr)
         if (rank .eq. 0) write (*, '(a,i4,a,es13.6)') 'iteration',
     &        its, '  err ', err
         if (.not. ((err .gt. epsi .and. epsi .ge. 0) .or.
     &        (its .lt. int(-epsi+.99) .and. epsi .lt. 0))) then
            iters = its
            exit
         end if
      end do
      local = 0
      do k = 1, nz
         do j = 1, nyl
            do i = 1, nxl
               local = local + phi(i, j, k)
            end do
         end do
      end do
      call mpi_reduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &     0, MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a)') 'grid ',
     &        nx, 'x', ny, 'x', nz, ' on ', dims(1), 'x', dims(2),
     &        ' ranks, ', nang, ' angles per octant: ', iters,
     &        ' iterations'
         write (*, '(a,es17.10)') 'flux total ', total * dx * dy * dz
         write (*, '(a,f0.3,a)') 'time ', mpi_wtime() - start, ' s'
      end if
      end

c     One octant: per z block, receive the upstream faces, sweep the
c     block with the diamond difference scheme, send the downstream
c     faces.
      subroutine octant(oct, dims, pi, pj, nxl, nyl, phi, phinew, src,
     &     sigt, psix, psiy, psiz, mu, eta, dx, dy, dz, w)
      implicit none
      include 'mpif.h'
      integer nx, ny, nz, nang, nzb, maxits
      double precision epsi
      common /deck/ epsi, nx, ny, nz, nang, nzb, maxits
      integer oct, dims(2), pi, pj, nxl, nyl
      double precision phi(nxl, nyl, nz), phinew(nxl, nyl, nz)
      double precision src(nxl, nyl, nz), sigt(nxl, nyl, nz)
      double precision psix(nang, nzb, nyl), psiy(nang, nzb, nxl)
      double precision psiz(nang, nxl, nyl), mu(nang), eta(nang)
      double precision dx, dy, dz, w
      integer sx, sy, sz, fromx, fromy, tox, toy, kb, nk, i, j, m, ierr
      sx = 1
      sy = 1
      sz = 1
      if (iand(oct, 1) .ne. 0) sx = -1
      if (iand(oct, 2) .ne. 0) sy = -1
      if (iand(oct, 4) .ne. 0) sz = -1
      fromx = MPI_PROC_NULL
      fromy = MPI_PROC_NULL
      tox = MPI_PROC_NULL
      toy = MPI_PROC_NULL
      if (pi-sx .ge. 0 .and. pi-sx .lt. dims(1))
     &     fromx = pi - sx + pj * dims(1)
      if (pj-sy .ge. 0 .and. pj-sy .lt. dims(2))
     &     fromy = pi + (pj - sy) * dims(1)
      if (pi+sx .ge. 0 .and. pi+sx .lt. dims(1))
     &     tox = pi + sx + pj * dims(1)
      if (pj+sy .ge. 0 .and. pj+sy .lt. dims(2))
     &     toy = pi + (pj + sy) * dims(1)
      do j = 1, nyl
         do i = 1, nxl
            do m = 1, nang
               psiz(m, i, j) = 0
            end do
         end do
      end do
      do kb = 0, nz - 1, nzb
         nk = min(nzb, nz - kb)
         call zero(psix, nang * nzb * nyl)
         call zero(psiy, nang * nzb * nxl)
         call mpi_recv(psix, nyl * nk * nang, MPI_DOUBLE_PRECISION,
     &        fromx, oct, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
         call mpi_recv(psiy, nxl * nk * nang, MPI_DOUBLE_PRECISION,
     &        fromy, oct, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
         call sweepb(kb, nk, sx, sy, sz, nxl, nyl, phi, phinew, src,
     &        sigt, psix, psiy, psiz, mu, eta, dx, dy, dz, w)
         call mpi_send(psix, nyl * nk * nang, MPI_DOUBLE_PRECISION,
     &        tox, oct, MPI_COMM_WORLD, ierr)
         call mpi_send(psiy, nxl * nk * nang, MPI_DOUBLE_PRECISION,
     &        toy, oct, MPI_COMM_WORLD, ierr)
      end do
      end

c     One z block of nk planes starting after plane kb: the diamond
c     difference sweep of its cells in the octant's direction, every
c     angle.
      subroutine sweepb(kb, nk, sx, sy, sz, nxl, nyl, phi, phinew, src,
     &     sigt, psix, psiy, psiz, mu, eta, dx, dy, dz, w)
      implicit none
      integer nx, ny, nz, nang, nzb, maxits
      double precision epsi
      common /deck/ epsi, nx, ny, nz, nang, nzb, maxits
      integer kb, nk, sx, sy, sz, nxl, nyl
      double precision phi(nxl, nyl, nz), phinew(nxl, nyl, nz)
      double precision src(nxl, nyl, nz), sigt(nxl, nyl, nz)
      double precision psix(nang, nk, nyl), psiy(nang, nk, nxl)
      double precision psiz(nang, nxl, nyl), mu(nang), eta(nang)
      double precision dx, dy, dz, w
      integer kk, i, j, k, ii, jj, m
      double precision q, sum, cx, cy, cz, psi
         do kk = 1, nk
            k = kb + kk
            if (sz .lt. 0) k = nz + 1 - k
            do jj = 1, nyl
               j = jj
               if (sy .lt. 0) j = nyl + 1 - jj
               do ii = 1, nxl
                  i = ii
                  if (sx .lt. 0) i = nxl + 1 - ii
                  q = src(i, j, k)
     &                 + 0.5d0 * sigt(i, j, k) * phi(i, j, k)
                  sum = 0
                  do m = 1, nang
                     cx = 2 * mu(m) / dx
                     cy = 2 * eta(m) / dy
                     cz = 2 * eta(m) / dz
                     psi = (q + cx * psix(m, kk, j)
     &                    + cy * psiy(m, kk, i)
     &                    + cz * psiz(m, i, j)) /
     &                    (sigt(i, j, k) + cx + cy + cz)
                     psix(m, kk, j) = 2 * psi - psix(m, kk, j)
                     psiy(m, kk, i) = 2 * psi - psiy(m, kk, i)
                     psiz(m, i, j) = 2 * psi - psiz(m, i, j)
                     sum = sum + psi
                  end do
                  phinew(i, j, k) = phinew(i, j, k) + w * sum
               end do
            end do
         end do
      end

c     a(1:n) = 0
      subroutine zero(a, n)
      implicit none
      integer n, i
      double precision a(n)
      do i = 1, n
         a(i) = 0
      end do
      end
