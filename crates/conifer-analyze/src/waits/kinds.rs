//! The wait-state patterns a waiting call is classed under ([`Pattern`]), as the module
//! documentation of [`waits`](super) defines them.

use serde::Serialize;

/// A wait-state pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// A receive waits for a send that started later.
    LateSender,
    /// A synchronous (or rendezvous) send waits for a receive posted later.
    LateReceiver,
    /// A barrier waits for its last member.
    WaitAtBarrier,
    /// An all-to-all collective waits for its last member.
    WaitAtNxn,
    /// A non-root of a one-to-all collective waits for the root.
    LateBroadcast,
    /// The root of an all-to-one collective waits for the first non-root.
    EarlyReduce,
    /// A call completing non-blocking sends (and nothing else) waits for them to complete,
    /// without a Late Receiver: eager sends, or rendezvous sends whose receive was posted
    /// in time (the transfer itself).
    SendCompletion,
}

impl Pattern {
    /// Every pattern, in table order.
    pub const ALL: [Pattern; 7] = [
        Pattern::LateSender,
        Pattern::LateReceiver,
        Pattern::WaitAtBarrier,
        Pattern::WaitAtNxn,
        Pattern::LateBroadcast,
        Pattern::EarlyReduce,
        Pattern::SendCompletion,
    ];

    /// The name `--json` uses (`late_sender`).
    pub fn key(self) -> &'static str {
        match self {
            Pattern::LateSender => "late_sender",
            Pattern::LateReceiver => "late_receiver",
            Pattern::WaitAtBarrier => "wait_at_barrier",
            Pattern::WaitAtNxn => "wait_at_nxn",
            Pattern::LateBroadcast => "late_broadcast",
            Pattern::EarlyReduce => "early_reduce",
            Pattern::SendCompletion => "send_completion",
        }
    }

    /// The name tables use (`Late Sender`).
    pub fn label(self) -> &'static str {
        match self {
            Pattern::LateSender => "Late Sender",
            Pattern::LateReceiver => "Late Receiver",
            Pattern::WaitAtBarrier => "Wait at Barrier",
            Pattern::WaitAtNxn => "Wait at NxN",
            Pattern::LateBroadcast => "Late Broadcast",
            Pattern::EarlyReduce => "Early Reduce",
            Pattern::SendCompletion => "Send Completion",
        }
    }
}
