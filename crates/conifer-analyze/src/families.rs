//! Which timing family a call's time is pooled in: its terminal's, or — for a terminal whose
//! stored signature is a skeleton (values held in streams), which names no family — the
//! family of the call's signature once its values are filled in.

use conifer_trace::decode::Signature;
use conifer_trace::timing::timing_family;
use conifer_trace::Trace;
use std::collections::HashMap;

/// Each terminal's timing family, and every family by its key.
pub struct Families {
    by_terminal: Vec<Option<u32>>,
    by_key: HashMap<Vec<u8>, u32>,
}

impl Families {
    /// The families of `trace`.
    pub fn new(trace: &Trace) -> Families {
        let record = &trace.record;
        let by_key = record
            .timing
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let sig = record.signatures.get(f.terminal as usize)?;
                Some((timing_family(sig), i as u32))
            })
            .collect();
        Families {
            by_terminal: record.timing_index(),
            by_key,
        }
    }

    /// The family of a call of terminal `t` whose filled-in signature is `signature`.
    pub fn of(&self, t: u32, signature: &Signature) -> Option<u32> {
        self.by_terminal
            .get(t as usize)
            .copied()
            .flatten()
            .or_else(|| {
                let bytes = conifer_trace::signature::encode_signature(signature);
                self.by_key.get(&timing_family(&bytes)).copied()
            })
    }
}
