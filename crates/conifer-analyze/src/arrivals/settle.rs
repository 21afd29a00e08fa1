//! Settling what arrived at receives whose status the trace does not have: the bytes sent
//! to the rank, less what its statuses account for, go first to the status-less receives
//! that name the sends' envelope exactly (sender, communicator, tag; shared in proportion
//! to capacity when several do), then what is left to every such receive with capacity to
//! spare (wildcards, persistent sends whose tag is not at hand), again in proportion.
//! A receive never gets more than its capacity. A partial trace, or a send never received,
//! may leave a share above what really arrived.

use super::gathered::{Envelope, Gathered, Key};
use std::collections::HashMap;

/// The received bytes of every rank's receives, per key.
pub(crate) fn settle(ranks: Vec<Gathered>) -> Vec<Vec<(Key, u64)>> {
    let mut incoming: Vec<HashMap<Envelope, u64>> = vec![HashMap::new(); ranks.len()];
    for g in &ranks {
        for (to, e, bytes) in &g.sends {
            if let Some(m) = incoming.get_mut(*to as usize) {
                *m.entry(e.clone()).or_default() += bytes;
            }
        }
    }
    ranks
        .into_iter()
        .zip(incoming)
        .map(|(g, incoming)| settle_rank(g, &incoming))
        .collect()
}

/// One rank's credits, given the bytes sent to it per envelope.
fn settle_rank(g: Gathered, incoming: &HashMap<Envelope, u64>) -> Vec<(Key, u64)> {
    let sent: u64 = incoming.values().sum();
    let known: u64 = g.known.iter().sum();
    let mut fills = vec![0u64; g.unknown.len()];
    // Exact envelopes first.
    let mut by_envelope: HashMap<&Envelope, Vec<usize>> = HashMap::new();
    for (i, (_, e, _)) in g.unknown.iter().enumerate() {
        if e.from.is_some() && e.tag.is_some() {
            by_envelope.entry(e).or_default().push(i);
        }
    }
    for (e, members) in by_envelope {
        let left = incoming
            .get(e)
            .copied()
            .unwrap_or(0)
            .saturating_sub(g.known_from.get(e).copied().unwrap_or(0));
        let caps: Vec<u64> = members.iter().map(|&i| g.unknown[i].2).collect();
        for (&i, share) in members.iter().zip(shares(left, &caps)) {
            fills[i] = share;
        }
    }
    // Then whatever no status or exact envelope accounts for.
    let rest = sent.saturating_sub(known + fills.iter().sum::<u64>());
    let spare: Vec<u64> = g
        .unknown
        .iter()
        .zip(&fills)
        .map(|((_, _, cap), f)| cap - f)
        .collect();
    for (f, share) in fills.iter_mut().zip(shares(rest, &spare)) {
        *f += share;
    }
    let mut credits = g.known;
    for ((key, _, _), f) in g.unknown.iter().zip(fills) {
        credits[*key] += f;
    }
    g.keys.into_iter().zip(credits).collect()
}

/// `amount` (at most the sum of `caps`) shared in proportion to `caps`, each share at most
/// its cap: rounded down, the bytes rounding leaves going one each to the first with room.
fn shares(amount: u64, caps: &[u64]) -> Vec<u64> {
    let total: u64 = caps.iter().sum();
    let amount = amount.min(total);
    if total == 0 {
        return vec![0; caps.len()];
    }
    let mut out: Vec<u64> = caps
        .iter()
        .map(|&c| (u128::from(amount) * u128::from(c) / u128::from(total)) as u64)
        .collect();
    let mut left = amount - out.iter().sum::<u64>();
    for (o, &c) in out.iter_mut().zip(caps) {
        if left > 0 && *o < c {
            *o += 1;
            left -= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shares;

    #[test]
    fn shares_follow_capacity_and_never_exceed_it() {
        assert_eq!(shares(30, &[10, 20]), vec![10, 20]);
        assert_eq!(shares(100, &[10, 20]), vec![10, 20]);
        assert_eq!(shares(10, &[1, 1, 1]), vec![1, 1, 1]);
        assert_eq!(shares(7, &[10, 10]), vec![4, 3]);
        assert_eq!(shares(5, &[0, 0]), vec![0, 0]);
    }
}
