//! Completion skeletons: what a completion call returns depends on when messages arrived —
//! the index `MPI_Waitany` and `MPI_Testany` return, the outcomes of `MPI_Testsome` and
//! `MPI_Waitsome`, the flag of `MPI_Test`, `MPI_Testall` and `MPI_Iprobe` with their statuses
//! — and so does the request array such a call is passed (which slots earlier calls already
//! set to `MPI_REQUEST_NULL`). The recorder keeps the rest of the call as one *skeleton*, the
//! array replaced by [`Value::StreamedRequests`] and the outputs by [`Value::StreamedOutputs`],
//! so every call of a call site is one terminal whatever completed, and feeds the thread's
//! value streams (`streams.rs`) with the rest, in call order, as indices into the call
//! site's distinct values (encoded values, kept beside the streams):
//!
//! - [`CHANGES`]: per call with a request array, 0 when the array is given whole (its index
//!   follows in [`VALUES`]), else 1 + the number of slots that differ from the *expected*
//!   array (each slot in [`SLOTS`], its value's index in [`VALUES`]). The expected array is
//!   the call site's previous array with the slots the previous call completed ([`Completed`],
//!   read from its outputs) set to the value the last explicitly changed completed slot took
//!   (the null request), once one was;
//! - [`OUTPUTS`]: per call, the index of its outputs' *head*: a byte 0 and the encoded values
//!   from the outputs' place to the return value; or, when the outputs hold arrays all of one
//!   length *n*, a byte 1 and the values with each array emptied, *n* in [`ITEM_COUNTS`] and
//!   per item *i* the index of the *i*-th values of the arrays, encoded one after the other,
//!   in [`ITEMS`] (an index and its status are one item).
//!
//! A call that found nothing (a poll whose flag or outcount is 0, [`Layout::quiet`]) keeps its
//! outputs in a second skeleton of the call site, without [`Value::StreamedOutputs`] (or whole,
//! without a request array), so a polling loop costs the grammar what it always did; the two
//! skeletons of a call site share its previous request array ([`site_end`]).

use crate::value::{encode_array_header, Value, ARRAY_TAG};
use crate::varint::Reader;

/// Series of the request arrays' changes (see the module's description).
pub const CHANGES: usize = 0;
/// Series of the changed slots.
pub const SLOTS: usize = 1;
/// Series of the request arrays' values (whole arrays and slots).
pub const VALUES: usize = 2;
/// Series of the outputs' heads.
pub const OUTPUTS: usize = 3;
/// Series of the outputs' array lengths.
pub const ITEM_COUNTS: usize = 4;
/// Series of the outputs' items.
pub const ITEMS: usize = 5;
/// Series of a completion skeleton.
pub const SERIES: usize = 6;

/// How a completion call names the slots of its request array it completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completed {
    /// It does not say.
    Unknown,
    /// The integer at this value index (`MPI_Waitany`'s index).
    Index(u8),
    /// The integers of the array at this value index (`MPI_Testsome`'s indices).
    Indices(u8),
    /// All of them when the integer at this value index is not 0 (`MPI_Testall`'s flag).
    AllIf(u8),
}

impl Completed {
    /// The code [`Value::StreamedRequests`] holds.
    pub fn code(self) -> (u8, u8) {
        match self {
            Completed::Unknown => (0, 0),
            Completed::Index(at) => (1, at),
            Completed::Indices(at) => (2, at),
            Completed::AllIf(at) => (3, at),
        }
    }

    /// The rule of `code`.
    pub fn of_code(kind: u8, at: u8) -> Completed {
        match kind {
            1 => Completed::Index(at),
            2 => Completed::Indices(at),
            3 => Completed::AllIf(at),
            _ => Completed::Unknown,
        }
    }

    /// The value index the rule reads.
    pub fn at(self) -> Option<usize> {
        match self {
            Completed::Unknown => None,
            Completed::Index(at) | Completed::Indices(at) | Completed::AllIf(at) => Some(at.into()),
        }
    }

    /// The slots of an array of `len` requests a call completed, given the value the rule
    /// reads (`None`: the call has no such value).
    pub fn slots(self, value: Option<&Value>, len: usize, out: &mut Vec<usize>) {
        out.clear();
        let slot = |v: &Value| match v {
            Value::Int(i) => usize::try_from(*i).ok().filter(|&i| i < len),
            _ => None,
        };
        match (self, value) {
            (Completed::Index(_), Some(v)) => out.extend(slot(v)),
            (Completed::Indices(_), Some(Value::Array(items))) => {
                out.extend(items.iter().filter_map(slot))
            }
            (Completed::AllIf(_), Some(Value::Int(flag))) if *flag != 0 => out.extend(0..len),
            _ => {}
        }
    }
}

/// Where a completion function's timing-dependent values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Value index of the request array, when it has one.
    pub requests: Option<usize>,
    /// Value index of the first output.
    pub outputs: usize,
    /// How it names the slots it completed.
    pub completed: Completed,
    /// Value index of the integer that is 0 when the call found nothing (a poll's flag or
    /// outcount), if it can.
    pub quiet: Option<usize>,
}

/// Most values a completion call has (with its return value).
const MAX_VALUES: usize = 16;

/// A completion call's signature taken apart by [`split`]: byte ranges in the signature.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// Each value's bytes (the return value last).
    pub values: Vec<(usize, usize)>,
    /// Each request's encoded value (empty when the call has no request array).
    pub requests: Vec<(usize, usize)>,
    /// True when the call has a request array.
    pub has_requests: bool,
    /// The outputs' encoded values.
    pub outputs: (usize, usize),
    /// True when the call found nothing: its outputs stay in the skeleton.
    pub quiet: bool,
    /// The skeleton's bytes up to the end of its request array's placeholder (0 without
    /// one): its call site, which quiet and other calls share.
    pub site_end: usize,
}

impl Split {
    /// Value `i` of signature `sig`, decoded.
    pub fn value(&self, sig: &[u8], i: usize) -> Option<Value> {
        let &(a, b) = self.values.get(i)?;
        Value::decode(&mut Reader::new(&sig[a..b]))
    }
}

/// Writes the skeleton of completion call `sig` (laid out as `layout` says) into `skeleton`
/// and returns where its parts are; `None` when the signature is not laid out so (then the
/// call is kept whole).
pub fn split(sig: &[u8], layout: Layout, skeleton: &mut Vec<u8>, out: &mut Split) -> Option<()> {
    let mut r = Reader::new(sig);
    let at = |r: &Reader| sig.len() - r.remaining();
    r.u64()?;
    r.u32()?;
    crate::caller::Caller::decode_if_present(&mut r)?;
    out.values.clear();
    out.requests.clear();
    out.has_requests = false;
    while r.remaining() > 0 {
        let n = out.values.len();
        if n == MAX_VALUES {
            return None;
        }
        let start = at(&r);
        if Some(n) == layout.requests && sig[start] == ARRAY_TAG {
            r.byte()?;
            let len = r.count()?;
            for _ in 0..len {
                let from = at(&r);
                Value::skip(&mut r)?;
                out.requests.push((from, at(&r)));
            }
            out.has_requests = true;
        } else {
            Value::skip(&mut r)?;
        }
        out.values.push((start, at(&r)));
    }
    let n = out.values.len();
    // The last value is the return value; at least one output comes before it.
    if n < 2 || layout.outputs >= n - 1 {
        return None;
    }
    out.quiet = layout
        .quiet
        .is_some_and(|q| out.value(sig, q) == Some(Value::Int(0)));
    let start = |i: usize| out.values[i].0;
    skeleton.clear();
    out.site_end = 0;
    match layout.requests.filter(|_| out.has_requests) {
        Some(req) => {
            skeleton.extend_from_slice(&sig[..start(req)]);
            let (kind, at) = layout.completed.code();
            Value::StreamedRequests(kind, at).encode(skeleton);
            out.site_end = skeleton.len();
        }
        // A poll without requests that found nothing is kept whole.
        None if out.quiet => return None,
        None => {}
    }
    let kept = if out.has_requests {
        req_end(out, layout)
    } else {
        0
    };
    out.outputs = (start(layout.outputs), start(n - 1));
    if out.quiet {
        skeleton.extend_from_slice(&sig[kept..]);
        return Some(());
    }
    match kept {
        0 => skeleton.extend_from_slice(&sig[..start(layout.outputs)]),
        k => skeleton.extend_from_slice(&sig[k..start(layout.outputs)]),
    }
    Value::StreamedOutputs.encode(skeleton);
    skeleton.extend_from_slice(&sig[start(n - 1)..]);
    Some(())
}

/// The bytes of skeleton `skeleton` up to the end of its request array's placeholder, its
/// call site's key ([`Split::site_end`]); 0 without one (or when malformed).
pub fn site_end(skeleton: &[u8]) -> usize {
    let mut r = Reader::new(skeleton);
    let header = r
        .u64()
        .and(r.u32())
        .and_then(|_| crate::caller::Caller::decode_if_present(&mut r));
    if header.is_none() {
        return 0;
    }
    while r.remaining() > 0 {
        match Value::decode(&mut r) {
            Some(Value::StreamedRequests(..)) => return skeleton.len() - r.remaining(),
            Some(_) => {}
            None => return 0,
        }
    }
    0
}

/// Where the request array of a split call ends in its signature.
fn req_end(out: &Split, layout: Layout) -> usize {
    layout.requests.map_or(0, |req| out.values[req].1)
}

/// A value's bytes, from and to.
type Range = (usize, usize);

/// A call's outputs as stored (see the module's description), made by [`outputs_parts`]: its
/// head, and its items (empty unless the outputs hold arrays all of one length). The buffers
/// are kept between calls, so taking outputs apart allocates nothing once they are grown.
#[derive(Clone, Debug, Default)]
pub struct OutputParts {
    /// The head's bytes.
    pub head: Vec<u8>,
    /// The items' bytes, one after another.
    items: Vec<u8>,
    /// Where each item ends in `items`.
    item_ends: Vec<usize>,
    /// Per value: its bytes, and the range of its elements in `elements` when an array.
    values: Vec<(Range, Option<Range>)>,
    /// The arrays' elements' bytes.
    elements: Vec<Range>,
}

impl OutputParts {
    /// The items, in order.
    pub fn items(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.item_ends.len()).map(|i| {
            let from = if i == 0 { 0 } else { self.item_ends[i - 1] };
            &self.items[from..self.item_ends[i]]
        })
    }
}

/// Takes outputs `outputs` apart as stored (see the module's description) into `parts`: its
/// head, and when they hold arrays of one length, each item.
pub fn outputs_parts(outputs: &[u8], parts: &mut OutputParts) -> Option<()> {
    let mut r = Reader::new(outputs);
    let at = |r: &Reader| outputs.len() - r.remaining();
    parts.values.clear();
    parts.elements.clear();
    parts.head.clear();
    parts.items.clear();
    parts.item_ends.clear();
    while r.remaining() > 0 {
        let start = at(&r);
        if outputs[start] == ARRAY_TAG {
            r.byte()?;
            let len = r.count()?;
            let first = parts.elements.len();
            for _ in 0..len {
                let from = at(&r);
                Value::skip(&mut r)?;
                parts.elements.push((from, at(&r)));
            }
            let elements = (first, parts.elements.len());
            parts.values.push(((start, at(&r)), Some(elements)));
        } else {
            Value::skip(&mut r)?;
            parts.values.push(((start, at(&r)), None));
        }
    }
    let mut lengths = parts
        .values
        .iter()
        .filter_map(|(_, e)| e.map(|(a, b)| b - a));
    let length = lengths.next();
    let Some(length) = length.filter(|&l| lengths.all(|m| m == l)) else {
        parts.head.push(0);
        parts.head.extend_from_slice(outputs);
        return Some(());
    };
    parts.head.push(1);
    for &((a, b), elements) in &parts.values {
        match elements {
            Some(_) => encode_array_header(&mut parts.head, 0),
            None => parts.head.extend_from_slice(&outputs[a..b]),
        }
    }
    for i in 0..length {
        for &(_, elements) in &parts.values {
            if let Some((first, _)) = elements {
                let (a, b) = parts.elements[first + i];
                parts.items.extend_from_slice(&outputs[a..b]);
            }
        }
        parts.item_ends.push(parts.items.len());
    }
    Some(())
}

/// Every value encoded in `bytes`, in order.
pub fn values_of(bytes: &[u8]) -> Option<Vec<Value>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while r.remaining() > 0 {
        out.push(Value::decode(&mut r)?);
    }
    Some(out)
}
