//! The rank × rank matrix of bytes and messages, point-to-point and collective.

use crate::effect::{Effect, Kind};
use serde::Serialize;

/// A dense `ranks × ranks` matrix, row = sender, column = receiver (world ranks).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// Ranks.
    pub n: u32,
    /// Point-to-point (and one-sided) bytes.
    pub p2p_bytes: Vec<u64>,
    /// Point-to-point messages.
    pub p2p_messages: Vec<u64>,
    /// Collective bytes (by the rule of [`crate::effect`]).
    pub coll_bytes: Vec<u64>,
    /// Collective messages: entries of at least one byte.
    pub coll_messages: Vec<u64>,
}

impl Matrix {
    pub(crate) fn new(n: u32) -> Matrix {
        let z = vec![0; (n as usize) * (n as usize)];
        Matrix {
            n,
            p2p_bytes: z.clone(),
            p2p_messages: z.clone(),
            coll_bytes: z.clone(),
            coll_messages: z,
        }
    }

    pub(crate) fn add(&mut self, e: &Effect, times: u64) {
        for edge in &e.edges {
            if edge.from >= self.n || edge.to >= self.n {
                continue;
            }
            let i = edge.from as usize * self.n as usize + edge.to as usize;
            match edge.kind {
                Kind::P2p => {
                    self.p2p_bytes[i] += edge.bytes * times;
                    self.p2p_messages[i] += times;
                }
                Kind::Coll => {
                    if edge.bytes > 0 {
                        self.coll_bytes[i] += edge.bytes * times;
                        self.coll_messages[i] += times;
                    }
                }
            }
        }
    }

    /// The entry (`from`, `to`) of the chosen metric and kinds.
    pub fn get(&self, from: u32, to: u32, messages: bool, p2p: bool, coll: bool) -> u64 {
        let i = from as usize * self.n as usize + to as usize;
        let (p, c) = if messages {
            (self.p2p_messages[i], self.coll_messages[i])
        } else {
            (self.p2p_bytes[i], self.coll_bytes[i])
        };
        (if p2p { p } else { 0 }) + (if coll { c } else { 0 })
    }
}
