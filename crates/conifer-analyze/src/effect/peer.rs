//! The peer a rank argument names, as a rank of the caller's communicator and as a world
//! rank.

use super::kinds::Caller;
use conifer_trace::value::{Position, Rank, Value};

/// The peer a rank value names, as a rank of the communicator the caller stands in at `at`.
pub fn local_peer(rank: &Rank, at: Position) -> Option<i64> {
    match *rank {
        Rank::Grid(d) => at.grid?.displaced(at.rank, d),
        Rank::Absolute(a) => Some(a),
        r => r.peer_of(at.rank),
    }
}

/// The world rank of the peer rank value `r` names in communicator `comm`, for `caller`: a
/// member of `comm` for an intra-communicator, of its remote group for an
/// inter-communicator (whose peers are stored absolute or relative to the caller's rank in
/// its local group). `None` for special ranks and unknown communicators.
pub fn world_peer(caller: &dyn Caller, comm: &Value, r: &Rank) -> Option<u32> {
    if r.is_special() {
        return None;
    }
    if let Some((p, _)) = caller.position(comm) {
        return local_peer(r, p).and_then(|l| caller.member(comm, l));
    }
    let (my, group) = caller.remote(comm)?;
    let peer = local_peer(
        r,
        Position {
            rank: my,
            grid: None,
        },
    )?;
    group.get(usize::try_from(peer).ok()?).copied().flatten()
}
