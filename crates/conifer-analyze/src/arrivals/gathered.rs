//! What one rank's receives come to once resolved: where bytes are credited ([`Key`]), what
//! statuses say, which receives still wait for an amount, and the rank's sends, by
//! [`Envelope`].

use crate::site::Site;
use std::collections::HashMap;

/// Where received bytes are credited: the receive's function, site and communicator.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// The function (C name).
    pub function: String,
    /// Its site.
    pub site: Site,
    /// The communicator, as the decoder prints it.
    pub comm: Option<String>,
}

/// A message's envelope as the receiver sees it: sender (world rank), communicator (as the
/// decoder prints it) and tag; `None` where the receive takes any (or the trace cannot
/// tell).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Envelope {
    /// Sender, world rank.
    pub from: Option<u32>,
    /// Communicator.
    pub comm: Option<String>,
    /// Tag.
    pub tag: Option<i64>,
}

/// One rank's receives resolved against its communicators, ready for [`settle`].
pub(crate) struct Gathered {
    /// Where bytes are credited.
    pub keys: Vec<Key>,
    /// Per key, bytes known from statuses.
    pub known: Vec<u64>,
    /// Bytes known from statuses per envelope.
    pub known_from: HashMap<Envelope, u64>,
    /// Receives whose arrival is unknown: (key, what they match, capacity).
    pub unknown: Vec<(usize, Envelope, u64)>,
    /// Bytes this rank sends: (receiver, envelope as the receiver sees it) → bytes.
    pub sends: Vec<(u32, Envelope, u64)>,
}
