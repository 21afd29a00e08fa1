! polls.c in Fortran (`use mpi`): the same rounds, polls and printout, so the Fortran wrappers'
! repeated polls are checked against the same protocol. Rounds 0-3 poll on rank 0, rounds 4-7
! on rank 1; round r uses poll kind mod(r, 4):
!   0 MPI_TESTANY(2, [MPI_REQUEST_NULL, req]) (found: index 2, Fortran's 1-based slot),
!   1 MPI_TEST(req),
!   2 MPI_TESTALL(2, [req, MPI_REQUEST_NULL]),
!   3 MPI_IPROBE(partner, r) (then MPI_RECV of the message).
! In Test rounds the poller deallocates, between its two loops of FIRST quiet polls, an array
! MPI has received into. All of a round's polls come from one call site (`poll_once`).
program polls
  use mpi
  implicit none
  integer, parameter :: rounds = 8, first = 100, go_tag = 1000
  integer :: rank, ierr, round, poller, kind, partner, message, req, quiet, i, go, payload
  integer :: failures
  integer, allocatable :: block(:)

  failures = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  partner = 1 - rank
  do round = 0, rounds - 1
    poller = merge(0, 1, round < rounds / 2)
    kind = mod(round, 4)
    message = -1
    if (rank == poller) then
      req = MPI_REQUEST_NULL
      if (kind /= 3) call MPI_IRECV(message, 1, MPI_INTEGER, partner, round, MPI_COMM_WORLD, &
                                    req, ierr)
      allocate(block(16))
      if (kind == 1) then
        call MPI_SEND(round, 1, MPI_INTEGER, rank, go_tag + 1, MPI_COMM_WORLD, ierr)
        call MPI_RECV(block(1), 1, MPI_INTEGER, rank, go_tag + 1, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
      end if
      do i = 1, first
        if (poll_once()) failures = failures + 1
      end do
      deallocate(block)
      do i = 1, first
        if (poll_once()) failures = failures + 1
      end do
      call MPI_SEND(round, 1, MPI_INTEGER, partner, go_tag, MPI_COMM_WORLD, ierr)
      quiet = 0
      do while (.not. poll_once())
        quiet = quiet + 1
      end do
      if (kind == 3) call MPI_RECV(message, 1, MPI_INTEGER, partner, round, MPI_COMM_WORLD, &
                                   MPI_STATUS_IGNORE, ierr)
      if (message /= 100 + round) failures = failures + 1
      write (*, '(A,I0,A,I0,A,I0)') 'ROUND ', round, ' rank=', rank, ' quiet_after_go=', quiet
    else
      go = -1
      payload = 100 + round
      call MPI_RECV(go, 1, MPI_INTEGER, partner, go_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (go /= round) failures = failures + 1
      call MPI_SEND(payload, 1, MPI_INTEGER, partner, round, MPI_COMM_WORLD, ierr)
    end if
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end do
  write (*, '(A,I0,A,I0)') 'RESULT ', rank, ' failures=', failures
  call MPI_FINALIZE(ierr)

contains

  ! One poll of the round's kind on its request (or message); true when it found it.
  logical function poll_once()
    integer :: pair(2), index, status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
    logical :: flag

    flag = .false.
    select case (kind)
    case (0)
      pair = [MPI_REQUEST_NULL, req]
      call MPI_TESTANY(2, pair, index, flag, status, ierr)
      req = pair(2)
      if (flag .and. (index /= 2 .or. status(MPI_SOURCE) /= partner .or. &
                      status(MPI_TAG) /= round)) failures = failures + 1
    case (1)
      call MPI_TEST(req, flag, status, ierr)
      if (flag .and. (status(MPI_SOURCE) /= partner .or. status(MPI_TAG) /= round)) &
        failures = failures + 1
    case (2)
      pair = [req, MPI_REQUEST_NULL]
      call MPI_TESTALL(2, pair, flag, statuses, ierr)
      req = pair(1)
      if (flag .and. (statuses(MPI_SOURCE, 1) /= partner .or. statuses(MPI_TAG, 1) /= round)) &
        failures = failures + 1
    case default
      call MPI_IPROBE(partner, round, MPI_COMM_WORLD, flag, status, ierr)
      if (flag .and. status(MPI_SOURCE) /= partner) failures = failures + 1
    end select
    poll_once = flag
  end function poll_once
end program polls
