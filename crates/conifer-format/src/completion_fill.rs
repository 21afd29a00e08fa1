//! Reading completion skeletons back (see [`crate::completion`]): filling a thread's calls in
//! order.

use crate::completion::{
    site_end, values_of, Completed, CHANGES, ITEMS, ITEM_COUNTS, OUTPUTS, SERIES, SLOTS, VALUES,
};
use crate::signature::{encode_signature, Signature};
use crate::value::Value;
use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::SeriesIter;

/// What filling a call site remembers from its previous call (of either of its skeletons:
/// the calls that found nothing and the others).
#[derive(Default)]
struct SiteState {
    /// Its request array.
    previous: Option<Vec<Value>>,
    /// The slots it completed.
    completed: Vec<usize>,
    /// The value completed slots take, once an explicit change showed it.
    null: Option<Value>,
}

/// Fills a thread's completion skeletons back in call order.
pub struct CompletionFiller<'a> {
    values: FastMap<u32, &'a [Vec<u8>]>,
    /// By call site ([`site_end`]).
    sites: FastMap<Box<[u8]>, SiteState>,
}

impl<'a> CompletionFiller<'a> {
    /// A filler over a thread's completion values (per skeleton terminal, its distinct values).
    pub fn new(values: &'a [(u32, Vec<Vec<u8>>)]) -> CompletionFiller<'a> {
        CompletionFiller {
            values: values.iter().map(|(t, v)| (*t, v.as_slice())).collect(),
            sites: FastMap::default(),
        }
    }

    /// True when terminal `terminal` is a completion skeleton.
    pub fn has(&self, terminal: u32) -> bool {
        self.values.contains_key(&terminal)
    }

    /// The full signature of the next call of completion skeleton `terminal` (`bytes`), its
    /// series at `cursors`; `None` when a stream ran out or is malformed.
    pub fn fill(
        &mut self,
        terminal: u32,
        bytes: &[u8],
        cursors: &mut [SeriesIter<'a>],
    ) -> Option<Vec<u8>> {
        if cursors.len() != SERIES {
            return None;
        }
        let table = *self.values.get(&terminal)?;
        let value = |k: u64| table.get(usize::try_from(k).ok()?).map(Vec::as_slice);
        let one = |bytes: &[u8]| values_of(bytes)?.pop();
        let key = &bytes[..site_end(bytes)];
        if !self.sites.contains_key(key) {
            self.sites.insert(key.into(), SiteState::default());
        }
        let site = self.sites.get_mut(key)?;
        let mut sig = Signature::parse(bytes)?;
        let mut values = Vec::with_capacity(sig.values.len() + 2);
        let mut requests = None;
        for v in std::mem::take(&mut sig.values) {
            match v {
                Value::StreamedRequests(kind, at) => {
                    let changes = cursors[CHANGES].next()?;
                    let array = if changes == 0 {
                        match one(value(cursors[VALUES].next()?)?)? {
                            Value::Array(items) => items,
                            _ => return None,
                        }
                    } else {
                        let mut array = site.previous.clone()?;
                        if let Some(null) = &site.null {
                            for &s in &site.completed {
                                *array.get_mut(s)? = null.clone();
                            }
                        }
                        for _ in 1..changes {
                            let slot = usize::try_from(cursors[SLOTS].next()?).ok()?;
                            let new = one(value(cursors[VALUES].next()?)?)?;
                            if site.completed.contains(&slot) {
                                site.null = Some(new.clone());
                            }
                            *array.get_mut(slot)? = new;
                        }
                        array
                    };
                    requests = Some((Completed::of_code(kind, at), array.len()));
                    site.previous = Some(array.clone());
                    values.push(Value::Array(array));
                }
                Value::StreamedOutputs => {
                    let head = value(cursors[OUTPUTS].next()?)?;
                    let (&split, head) = head.split_first()?;
                    let mut outputs = values_of(head)?;
                    if split == 1 {
                        let n = cursors[ITEM_COUNTS].next()?;
                        let arrays: Vec<usize> = (0..outputs.len())
                            .filter(|&i| matches!(outputs[i], Value::Array(_)))
                            .collect();
                        for _ in 0..n {
                            let item = values_of(value(cursors[ITEMS].next()?)?)?;
                            if item.len() != arrays.len() {
                                return None;
                            }
                            for (&i, v) in arrays.iter().zip(item) {
                                if let Value::Array(items) = &mut outputs[i] {
                                    items.push(v);
                                }
                            }
                        }
                    }
                    values.extend(outputs);
                }
                other => values.push(other),
            }
        }
        if let Some((rule, len)) = requests {
            let read = rule.at().and_then(|at| values.get(at));
            rule.slots(read, len, &mut site.completed);
        }
        sig.values = values;
        Some(encode_signature(&sig))
    }
}
