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

/// Which entries of a [`Matrix`] a reader shows: bytes or messages, and which kinds of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixSelect {
    /// Messages (else bytes).
    pub messages: bool,
    /// Point-to-point and one-sided calls.
    pub p2p: bool,
    /// Collectives.
    pub coll: bool,
}

/// A word [`MatrixSelect::from_words`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownWord {
    /// Not `bytes` or `messages`.
    Metric(String),
    /// Not `p2p`, `coll` or `all`.
    Kind(String),
}

impl MatrixSelect {
    /// The selection of `metric` (`bytes`, `messages`) and `kind` (`p2p`, `coll`, `all`).
    pub fn from_words(metric: &str, kind: &str) -> Result<MatrixSelect, UnknownWord> {
        let messages = match metric {
            "bytes" => false,
            "messages" => true,
            m => return Err(UnknownWord::Metric(m.to_string())),
        };
        let (p2p, coll) = match kind {
            "p2p" => (true, false),
            "coll" => (false, true),
            "all" => (true, true),
            k => return Err(UnknownWord::Kind(k.to_string())),
        };
        Ok(MatrixSelect {
            messages,
            p2p,
            coll,
        })
    }

    /// The selected entries of `m`, a row per sender.
    pub fn rows(&self, m: &Matrix) -> Vec<Vec<u64>> {
        (0..m.n)
            .map(|i| {
                (0..m.n)
                    .map(|j| m.get(i, j, self.messages, self.p2p, self.coll))
                    .collect()
            })
            .collect()
    }

    /// `bytes` or `messages`.
    pub fn metric(&self) -> &'static str {
        if self.messages {
            "messages"
        } else {
            "bytes"
        }
    }

    /// `p2p`, `coll` or `all`.
    pub fn kind(&self) -> &'static str {
        match (self.p2p, self.coll) {
            (true, false) => "p2p",
            (false, true) => "coll",
            _ => "all",
        }
    }
}
