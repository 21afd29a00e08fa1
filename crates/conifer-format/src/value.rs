//! The recorded value of one MPI call argument, its binary encoding (the bytes that make up a
//! call signature) and its text form (what `conifer decode` prints).

pub use crate::handle::{
    derived_comm_id, HandleKind, HandleRef, DERIVED_COMM_BASE, REQUEST_LOCAL_BITS,
};
use crate::predefined;
use crate::rank::fmt_rank;
pub use crate::rank::{Position, Rank};
pub use crate::rank_column::Column;
use crate::varint::{put_i64, put_u64, Reader};
use std::fmt;

/// Writes a communicator id: `comm3`, or `<parent>.idup<k>` for a derived one.
fn fmt_comm_id(f: &mut fmt::Formatter<'_>, id: u32) -> fmt::Result {
    if !(DERIVED_COMM_BASE..DERIVED_COMM_BASE + (1 << 30)).contains(&id) {
        return write!(f, "comm{id}");
    }
    let (parent, k) = ((id >> 14) & 0xFFFF, id & 0x3FFF);
    match predefined::names(HandleKind::Comm).get(parent as usize) {
        Some(name) if parent < 3 => write!(f, "{name}.idup{k}"),
        _ => {
            fmt_comm_id(f, parent - 3)?;
            write!(f, ".idup{k}")
        }
    }
}

/// Where a buffer argument points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// `NULL`.
    Null,
    /// `MPI_IN_PLACE`.
    InPlace,
    /// `MPI_BOTTOM`.
    Bottom,
    /// Offset `offset` into memory segment `id` (a heap allocation, or a static address given
    /// an id on first use).
    Segment {
        /// Symbolic segment id.
        id: u32,
        /// Byte offset from the segment's start.
        offset: i64,
    },
    /// The calling thread's stack, `offset` bytes above the stack pointer the program had
    /// when it made the MPI call: a local of the calling routine has the same offset however
    /// deep the routine was called.
    Stack {
        /// Byte offset from the caller's stack pointer.
        offset: i64,
    },
}

/// A completed operation's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Status {
    /// `MPI_SOURCE`.
    pub source: Rank,
    /// `MPI_TAG`.
    pub tag: i64,
    /// `MPI_ERROR`.
    pub error: i64,
    /// Received bytes (`MPI_Get_count` with `MPI_BYTE`).
    pub bytes: i64,
}

/// Appends a status value (as [`Value::Status`] encodes it), without building a [`Value`].
pub fn encode_status(out: &mut Vec<u8>, s: &Status) {
    out.push(tag::STATUS);
    s.source.encode(out);
    put_i64(out, s.tag);
    put_i64(out, s.error);
    put_i64(out, s.bytes)
}

/// One recorded argument value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// An integer (counts, tags, sizes, flags, …).
    Int(i64),
    /// A rank.
    Rank(Rank),
    /// An MPI handle.
    Handle(HandleKind, HandleRef),
    /// A buffer address.
    Buffer(Buffer),
    /// A string.
    Str(String),
    /// An array of values.
    Array(Vec<Value>),
    /// A status.
    Status(Status),
    /// `MPI_STATUS_IGNORE`, `MPI_STATUSES_IGNORE`, `MPI_ERRCODES_IGNORE` or a `NULL` output.
    Ignored,
    /// A value Conifer does not interpret (callbacks, attribute values, tool handles).
    Opaque,
    /// Coordinates in a Cartesian communicator, as offsets from the caller's own coordinates
    /// (the shortest way round in periodic dimensions).
    Coords(Vec<i64>),
    /// In a signature skeleton: an integer whose value comes from the thread's value stream
    /// (see [`crate::streams`]).
    StreamedInt,
    /// In a signature skeleton: a buffer in segment `.0` whose offset comes from the thread's
    /// value stream.
    StreamedOffset(u32),
    /// In a signature skeleton: a status with this source and error whose tag and received
    /// bytes come from the thread's value streams.
    StreamedStatus(Rank, i64),
    /// In a completion skeleton (see [`crate::completion`]): the array of requests a
    /// completion call was passed, which the thread's streams give as the previous call's
    /// array with the slots it completed and some others changed, or whole. It holds how the
    /// call names the slots it completed ([`crate::completion::Completed`]'s code).
    StreamedRequests(u8, u8),
    /// In a completion skeleton: the outputs that depend on what completed (an index, a
    /// flag, the indices and statuses), zero or more values the thread's streams give.
    StreamedOutputs,
    /// An integer equal to `a · r + b`, `r` the caller's world rank: chosen at the merge
    /// when that makes ranks agree (file offsets and displacements of rank-sized blocks; see
    /// `conifer_write::int_codes`). Decoding gives back the integer.
    RankAffine {
        /// Factor of the caller's world rank.
        a: i64,
        /// Constant term.
        b: i64,
    },
    /// An integer given per world rank by a column (see [`crate::rank_column`]): chosen at the
    /// merge when ranks share a call and differ only in this integer. Decoding gives back the
    /// caller's integer.
    RankColumn(Column),
    /// A status whose tag and received bytes are per-rank integers (each [`Value::Int`],
    /// [`Value::RankAffine`] or [`Value::RankColumn`]). Decoding gives back a
    /// [`Value::Status`].
    RankStatus {
        /// `MPI_SOURCE`.
        source: Rank,
        /// `MPI_ERROR`.
        error: i64,
        /// `MPI_TAG`, per rank.
        tag: Box<Value>,
        /// Received bytes, per rank.
        bytes: Box<Value>,
    },
    /// A buffer in segment `id` whose offset is a per-rank integer (as for
    /// [`Value::RankStatus`]). Decoding gives back a [`Buffer::Segment`].
    RankBuffer {
        /// Symbolic segment id.
        id: u32,
        /// The offset, per rank.
        offset: Box<Value>,
    },
    /// A handle of kind `kind` whose symbolic id is a per-rank integer (as for
    /// [`Value::RankStatus`]): ranks that number their requests apart. Decoding gives back a
    /// [`Value::Handle`].
    RankHandle {
        /// The handle's kind.
        kind: HandleKind,
        /// Its symbolic id, per rank.
        id: Box<Value>,
    },
}

/// The first byte of an encoded [`Value::Array`].
pub const ARRAY_TAG: u8 = tag::ARRAY;

mod tag {
    pub const INT: u8 = 0;
    pub const RANK: u8 = 1;
    pub const HANDLE: u8 = 2;
    pub const BUFFER: u8 = 3;
    pub const STR: u8 = 4;
    pub const ARRAY: u8 = 5;
    pub const STATUS: u8 = 6;
    pub const IGNORED: u8 = 7;
    pub const OPAQUE: u8 = 8;
    pub const COORDS: u8 = 9;
    pub const STREAMED_INT: u8 = 10;
    pub const STREAMED_OFFSET: u8 = 11;
    pub const STREAMED_STATUS: u8 = 12;
    pub const RANK_AFFINE: u8 = 13;
    pub const STREAMED_REQUESTS: u8 = 14;
    pub const STREAMED_OUTPUTS: u8 = 15;
    pub const RANK_COLUMN: u8 = 16;
    pub const RANK_STATUS: u8 = 17;
    pub const RANK_BUFFER: u8 = 18;
    pub const RANK_HANDLE: u8 = 19;
}

impl Value {
    /// Appends the binary form.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Int(v) => {
                out.push(tag::INT);
                put_i64(out, *v)
            }
            Value::Rank(rank) => {
                out.push(tag::RANK);
                rank.encode(out)
            }
            Value::Handle(kind, handle) => encode_handle(out, *kind, *handle),
            Value::Buffer(b) => encode_buffer(out, *b),
            Value::Str(s) => {
                out.push(tag::STR);
                put_u64(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes())
            }
            Value::Array(items) => {
                out.push(tag::ARRAY);
                put_u64(out, items.len() as u64);
                items.iter().for_each(|v| v.encode(out))
            }
            Value::Status(s) => encode_status(out, s),
            Value::Ignored => out.push(tag::IGNORED),
            Value::Opaque => out.push(tag::OPAQUE),
            Value::StreamedInt => out.push(tag::STREAMED_INT),
            Value::StreamedRequests(kind, at) => out.extend([tag::STREAMED_REQUESTS, *kind, *at]),
            Value::StreamedOutputs => out.push(tag::STREAMED_OUTPUTS),
            Value::RankAffine { a, b } => {
                out.push(tag::RANK_AFFINE);
                put_i64(out, *a);
                put_i64(out, *b)
            }
            Value::RankColumn(column) => {
                out.push(tag::RANK_COLUMN);
                column.encode(out)
            }
            Value::RankStatus {
                source,
                error,
                tag: t,
                bytes,
            } => {
                out.push(tag::RANK_STATUS);
                source.encode(out);
                put_i64(out, *error);
                t.encode(out);
                bytes.encode(out)
            }
            Value::RankBuffer { id, offset } => {
                out.push(tag::RANK_BUFFER);
                put_u64(out, (*id).into());
                offset.encode(out)
            }
            Value::RankHandle { kind, id } => {
                out.push(tag::RANK_HANDLE);
                out.push(kind.code());
                id.encode(out)
            }
            Value::StreamedOffset(id) => {
                out.push(tag::STREAMED_OFFSET);
                put_u64(out, (*id).into())
            }
            Value::StreamedStatus(source, error) => {
                out.push(tag::STREAMED_STATUS);
                source.encode(out);
                put_i64(out, *error)
            }
            Value::Coords(offsets) => encode_coords(out, offsets),
        }
    }

    /// Reads one value; `None` on malformed input.
    pub fn decode(r: &mut Reader) -> Option<Value> {
        Some(match r.byte()? {
            tag::INT => Value::Int(r.i64()?),
            tag::RANK => Value::Rank(Rank::decode(r)?),
            tag::HANDLE => {
                let kind = HandleKind::from_code(r.byte()?)?;
                let handle = match r.byte()? {
                    0 => HandleRef::Named(u16::try_from(r.u64()?).ok()?),
                    1 => HandleRef::Id(r.u32()?),
                    2 => HandleRef::Unknown,
                    _ => return None,
                };
                Value::Handle(kind, handle)
            }
            tag::BUFFER => Value::Buffer(match r.byte()? {
                0 => Buffer::Null,
                1 => Buffer::InPlace,
                2 => Buffer::Bottom,
                3 => Buffer::Segment {
                    id: r.u32()?,
                    offset: r.i64()?,
                },
                4 => Buffer::Stack { offset: r.i64()? },
                _ => return None,
            }),
            tag::STR => {
                let n = r.count()?;
                Value::Str(String::from_utf8_lossy(r.take(n)?).into_owned())
            }
            tag::ARRAY => {
                let n = r.count()?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(Value::decode(r)?);
                }
                Value::Array(items)
            }
            tag::STATUS => Value::Status(Status {
                source: Rank::decode(r)?,
                tag: r.i64()?,
                error: r.i64()?,
                bytes: r.i64()?,
            }),
            tag::IGNORED => Value::Ignored,
            tag::OPAQUE => Value::Opaque,
            tag::STREAMED_INT => Value::StreamedInt,
            tag::STREAMED_REQUESTS => Value::StreamedRequests(r.byte()?, r.byte()?),
            tag::STREAMED_OUTPUTS => Value::StreamedOutputs,
            tag::RANK_AFFINE => Value::RankAffine {
                a: r.i64()?,
                b: r.i64()?,
            },
            tag::RANK_COLUMN => Value::RankColumn(Column::decode(r)?),
            tag::RANK_STATUS => Value::RankStatus {
                source: Rank::decode(r)?,
                error: r.i64()?,
                tag: Box::new(per_rank_int(r)?),
                bytes: Box::new(per_rank_int(r)?),
            },
            tag::RANK_BUFFER => Value::RankBuffer {
                id: r.u32()?,
                offset: Box::new(per_rank_int(r)?),
            },
            tag::RANK_HANDLE => Value::RankHandle {
                kind: HandleKind::from_code(r.byte()?)?,
                id: Box::new(per_rank_int(r)?),
            },
            tag::STREAMED_OFFSET => Value::StreamedOffset(r.u32()?),
            tag::STREAMED_STATUS => Value::StreamedStatus(Rank::decode(r)?, r.i64()?),
            tag::COORDS => {
                let n = r.count()?;
                Value::Coords((0..n).map(|_| r.i64()).collect::<Option<_>>()?)
            }
            _ => return None,
        })
    }

    /// Steps over one value without building it (no allocation, arrays included); `None`
    /// on malformed input, exactly where [`Value::decode`] would fail.
    pub fn skip(r: &mut Reader) -> Option<()> {
        match r.peek()? {
            tag::ARRAY => {
                r.byte()?;
                for _ in 0..r.count()? {
                    Value::skip(r)?;
                }
            }
            tag::STR => {
                r.byte()?;
                let n = r.count()?;
                r.take(n)?;
            }
            tag::COORDS => {
                r.byte()?;
                for _ in 0..r.count()? {
                    r.i64()?;
                }
            }
            _ => {
                Value::decode(r)?;
            }
        }
        Some(())
    }

    /// The text form, with relative ranks and coordinates turned back into absolute ones given
    /// the caller's position in the call's communicator (`None` keeps them relative: `+d`/`-d`
    /// for ranks, `@d` for grid displacements, `~[..]` for coordinate offsets).
    pub fn display<'a>(&'a self, at: Option<Position<'a>>) -> DisplayValue<'a> {
        DisplayValue { value: self, at }
    }
}

/// Reads a per-rank integer: an integer, a rank-affine integer or a column.
fn per_rank_int(r: &mut Reader) -> Option<Value> {
    let v = Value::decode(r)?;
    v.is_per_rank_int().then_some(v)
}

impl Value {
    /// True for the values a per-rank integer field holds: [`Value::Int`],
    /// [`Value::RankAffine`] and [`Value::RankColumn`].
    pub fn is_per_rank_int(&self) -> bool {
        matches!(
            self,
            Value::Int(_) | Value::RankAffine { .. } | Value::RankColumn(_)
        )
    }

    /// The integer a per-rank integer field holds for the caller of world rank `rank`
    /// (`None` for other values and for a rank its column does not cover).
    pub fn int_for_rank(&self, rank: u32) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::RankAffine { a, b } => Some(a.wrapping_mul(i64::from(rank)).wrapping_add(*b)),
            Value::RankColumn(column) => column.at(rank),
            _ => None,
        }
    }
}

/// Appends a handle value (the encoder's hot path writes these without building a [`Value`]).
pub fn encode_handle(out: &mut Vec<u8>, kind: HandleKind, handle: HandleRef) {
    // The common short forms in one write (signatures are built on every MPI call).
    match handle {
        HandleRef::Named(code) if code < 0x80 => {
            return out.extend_from_slice(&[tag::HANDLE, kind.code(), 0, code as u8]);
        }
        HandleRef::Id(id) if id < 0x80 => {
            return out.extend_from_slice(&[tag::HANDLE, kind.code(), 1, id as u8]);
        }
        // Two varint bytes: the requests of pools 1-3 (see `REQUEST_LOCAL_BITS`).
        HandleRef::Id(id) if id < 0x4000 => {
            let low = (id as u8 & 0x7f) | 0x80;
            return out.extend_from_slice(&[tag::HANDLE, kind.code(), 1, low, (id >> 7) as u8]);
        }
        _ => {}
    }
    out.push(tag::HANDLE);
    out.push(kind.code());
    match handle {
        HandleRef::Named(code) => {
            out.push(0);
            put_u64(out, code.into())
        }
        HandleRef::Id(id) => {
            out.push(1);
            put_u64(out, id.into())
        }
        HandleRef::Unknown => out.push(2),
    }
}

/// Appends a buffer value.
pub fn encode_buffer(out: &mut Vec<u8>, buffer: Buffer) {
    out.push(tag::BUFFER);
    match buffer {
        Buffer::Null => out.push(0),
        Buffer::InPlace => out.push(1),
        Buffer::Bottom => out.push(2),
        Buffer::Segment { id, offset } => {
            out.push(3);
            put_u64(out, id.into());
            put_i64(out, offset)
        }
        Buffer::Stack { offset } => {
            out.push(4);
            put_i64(out, offset)
        }
    }
}

/// Appends the header of an array of `len` values; the caller appends the values.
pub fn encode_array_header(out: &mut Vec<u8>, len: usize) {
    out.push(tag::ARRAY);
    put_u64(out, len as u64);
}

/// Appends an integer value.
pub fn encode_int(out: &mut Vec<u8>, v: i64) {
    let zigzag = crate::varint::zigzag(v);
    if zigzag < 0x80 {
        // The common one-byte form in one write.
        return out.extend_from_slice(&[tag::INT, zigzag as u8]);
    }
    out.push(tag::INT);
    put_i64(out, v);
}

/// Appends [`Value::Ignored`] (an output the caller asked MPI not to write, or one MPI left
/// unset), in one write.
#[inline]
pub fn encode_ignored(out: &mut Vec<u8>) {
    out.push(tag::IGNORED);
}

/// Appends [`Value::Opaque`], in one write.
#[inline]
pub fn encode_opaque(out: &mut Vec<u8>) {
    out.push(tag::OPAQUE);
}

/// Appends a rank value.
pub fn encode_rank(out: &mut Vec<u8>, rank: Rank) {
    out.push(tag::RANK);
    rank.encode(out);
}

/// Appends coordinates given as offsets from the caller's coordinates.
pub fn encode_coords(out: &mut Vec<u8>, offsets: &[i64]) {
    out.push(tag::COORDS);
    put_u64(out, offsets.len() as u64);
    offsets.iter().for_each(|&o| put_i64(out, o));
}

/// A value ready to print.
pub struct DisplayValue<'a> {
    value: &'a Value,
    at: Option<Position<'a>>,
}

impl fmt::Display for DisplayValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Value::Int(v) => write!(f, "{v}"),
            Value::Rank(rank) => fmt_rank(f, *rank, self.at),
            Value::Handle(kind, HandleRef::Named(code)) => {
                match predefined::names(*kind).get(*code as usize) {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}?{code}", kind.prefix()),
                }
            }
            Value::Handle(HandleKind::Request, HandleRef::Id(id)) => {
                write!(
                    f,
                    "req{}.{}",
                    id >> REQUEST_LOCAL_BITS,
                    id & ((1 << REQUEST_LOCAL_BITS) - 1)
                )
            }
            Value::Handle(HandleKind::Comm, HandleRef::Id(id)) => fmt_comm_id(f, *id),
            Value::Handle(kind, HandleRef::Id(id)) => write!(f, "{}{id}", kind.prefix()),
            Value::Handle(kind, HandleRef::Unknown) => write!(f, "{}?", kind.prefix()),
            Value::Buffer(Buffer::Null) => f.write_str("NULL"),
            Value::Buffer(Buffer::InPlace) => f.write_str("MPI_IN_PLACE"),
            Value::Buffer(Buffer::Bottom) => f.write_str("MPI_BOTTOM"),
            Value::Buffer(Buffer::Segment { id, offset }) => write!(f, "seg{id}{offset:+}"),
            Value::Buffer(Buffer::Stack { offset }) => write!(f, "stack{offset:+}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", v.display(self.at))?;
                }
                f.write_str("]")
            }
            Value::Status(s) => {
                f.write_str("{src=")?;
                fmt_rank(f, s.source, self.at)?;
                write!(f, ",tag={},err={},bytes={}}}", s.tag, s.error, s.bytes)
            }
            Value::Ignored => f.write_str("IGNORE"),
            Value::Opaque => f.write_str("?"),
            Value::StreamedInt => f.write_str("<stream>"),
            Value::StreamedRequests(..) => f.write_str("[<requests stream>]"),
            Value::StreamedOutputs => f.write_str("<completion stream>"),
            Value::RankAffine { a, b } => write!(f, "{a}*rank{b:+}"),
            Value::RankColumn(c) => {
                let items: Vec<String> = c.per_rank.iter().map(i64::to_string).collect();
                write!(f, "rank{}:[{}]", c.first, items.join(","))
            }
            Value::RankStatus {
                source,
                error,
                tag,
                bytes,
            } => {
                f.write_str("{src=")?;
                fmt_rank(f, *source, self.at)?;
                write!(
                    f,
                    ",tag={},err={error},bytes={}}}",
                    tag.display(self.at),
                    bytes.display(self.at)
                )
            }
            Value::RankBuffer { id, offset } => {
                write!(f, "seg{id}+{}", offset.display(self.at))
            }
            Value::RankHandle { kind, id } => {
                write!(f, "{}{}", kind.prefix(), id.display(self.at))
            }
            Value::StreamedOffset(id) => write!(f, "seg{id}+<stream>"),
            Value::StreamedStatus(..) => f.write_str("{<stream>}"),
            Value::Coords(offsets) => {
                let absolute = self.at.and_then(|me| {
                    let grid = me.grid?;
                    let here = grid.coords(me.rank)?;
                    Some(
                        here.iter()
                            .zip(offsets)
                            .zip(grid.dims.iter().zip(&grid.periods))
                            .map(|((c, o), (d, periodic))| {
                                if *periodic {
                                    (c + o).rem_euclid(*d)
                                } else {
                                    c + o
                                }
                            })
                            .collect::<Vec<i64>>(),
                    )
                });
                let (prefix, shown) = match &absolute {
                    Some(coords) => ("", coords.as_slice()),
                    None => ("~", offsets.as_slice()),
                };
                let items: Vec<String> = shown.iter().map(i64::to_string).collect();
                write!(f, "{prefix}[{}]", items.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    /// `skip` steps over exactly the bytes `decode` reads, and fails where it fails.
    #[test]
    fn skip_steps_over_what_decode_reads() {
        let values = [
            Value::Int(-300),
            Value::Str("héllo".into()),
            Value::Array(vec![
                Value::Handle(HandleKind::Request, HandleRef::Id(5000)),
                Value::Array(vec![Value::Int(1), Value::Opaque]),
                Value::Coords(vec![-1, 2]),
            ]),
            Value::Coords(vec![3, -4, 5]),
            Value::Status(Status {
                source: Rank::Relative(-2),
                tag: 7,
                error: 0,
                bytes: 64,
            }),
            Value::StreamedRequests(1, 2),
        ];
        let mut bytes = Vec::new();
        values.iter().for_each(|v| v.encode(&mut bytes));
        let (mut a, mut b) = (Reader::new(&bytes), Reader::new(&bytes));
        for v in &values {
            assert_eq!(Value::decode(&mut a).as_ref(), Some(v));
            assert_eq!(Value::skip(&mut b), Some(()));
            assert_eq!(a.remaining(), b.remaining(), "after {v:?}");
        }
        for cut in 0..bytes.len() {
            let (mut a, mut b) = (Reader::new(&bytes[..cut]), Reader::new(&bytes[..cut]));
            while a.remaining() > 0 {
                let decoded = Value::decode(&mut a).is_some();
                assert_eq!(Value::skip(&mut b).is_some(), decoded, "cut at {cut}");
                if !decoded {
                    break;
                }
            }
        }
    }

    #[test]
    fn short_forms_write_the_bytes_of_the_general_form() {
        for n in [0u32, 1, 5, 127, 128, 300, 4_101, 0x3fff, 0x4000, 70_000] {
            let mut named = Vec::new();
            encode_handle(&mut named, HandleKind::Datatype, HandleRef::Named(n as u16));
            let mut general = vec![tag::HANDLE, HandleKind::Datatype.code(), 0];
            put_u64(&mut general, u64::from(n as u16));
            assert_eq!(named, general, "named {n}");
            let mut id = Vec::new();
            encode_handle(&mut id, HandleKind::Comm, HandleRef::Id(n));
            let mut general = vec![tag::HANDLE, HandleKind::Comm.code(), 1];
            put_u64(&mut general, n.into());
            assert_eq!(id, general, "id {n}");
        }
        for v in [0i64, 1, -1, 63, -64, 64, -65, 1 << 40, i64::MIN] {
            let mut int = Vec::new();
            encode_int(&mut int, v);
            let mut general = vec![tag::INT];
            put_i64(&mut general, v);
            assert_eq!(int, general, "int {v}");
        }
        let (mut short, mut general) = (Vec::new(), Vec::new());
        encode_ignored(&mut short);
        encode_opaque(&mut short);
        Value::Ignored.encode(&mut general);
        Value::Opaque.encode(&mut general);
        assert_eq!(short, general);
        let mut r = Reader::new(&short);
        assert_eq!(Value::decode(&mut r), Some(Value::Ignored));
        assert_eq!(Value::decode(&mut r), Some(Value::Opaque));
    }

    fn sample() -> Vec<Value> {
        vec![
            Value::Int(-7),
            Value::Rank(Rank::Relative(-1)),
            Value::Rank(Rank::ProcNull),
            Value::Handle(HandleKind::Datatype, HandleRef::Named(14)),
            Value::Handle(HandleKind::Request, HandleRef::Id(3)),
            Value::Buffer(Buffer::Segment { id: 2, offset: 64 }),
            Value::Buffer(Buffer::InPlace),
            Value::Str("name".into()),
            Value::Array(vec![Value::Int(1), Value::Rank(Rank::Relative(2))]),
            Value::Status(Status {
                source: Rank::Relative(1),
                tag: 5,
                error: 0,
                bytes: 512,
            }),
            Value::Ignored,
            Value::Opaque,
            Value::Rank(Rank::Grid(1)),
            Value::Coords(vec![-1, 1]),
            Value::Handle(
                HandleKind::Comm,
                HandleRef::Id(derived_comm_id(HandleRef::Id(2), 1).unwrap()),
            ),
            Value::Handle(
                HandleKind::Comm,
                HandleRef::Id(derived_comm_id(HandleRef::Named(1), 0).unwrap()),
            ),
            Value::Buffer(Buffer::Stack { offset: 48 }),
            // Rank 5 of a 3 × 3 grid is on row 1; one row on (stride 3): rank 8.
            Value::Rank(Rank::Ring {
                stride: 3,
                size: 3,
                step: 1,
            }),
        ]
    }

    #[test]
    fn values_round_trip() {
        let mut out = Vec::new();
        for v in sample() {
            v.encode(&mut out);
        }
        let mut r = Reader::new(&out);
        for v in sample() {
            assert_eq!(Value::decode(&mut r), Some(v));
        }
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn text_restores_absolute_ranks() {
        // Rank 5 of a periodic 3x3 grid sits at (1,2). Grid displacement 1 is offset (0,+1)
        // (digits (0+3)*6 + (1+3) = 22 less the zero point 3*6+3 = 21), which wraps to (1,0),
        // rank 3; coordinate offsets (-1,+1) wrap to (0,0).
        let grid = Grid::new(vec![3, 3], vec![true, true]).unwrap();
        let at = Position {
            rank: 5,
            grid: Some(&grid),
        };
        let texts: Vec<String> = sample()
            .iter()
            .map(|v| v.display(Some(at)).to_string())
            .collect();
        assert_eq!(
            texts,
            [
                "-7",
                "4",
                "MPI_PROC_NULL",
                "MPI_DOUBLE",
                "req0.3",
                "seg2+64",
                "MPI_IN_PLACE",
                "\"name\"",
                "[1,7]",
                "{src=6,tag=5,err=0,bytes=512}",
                "IGNORE",
                "?",
                "3",
                "[0,0]",
                "comm2.idup1",
                "MPI_COMM_WORLD.idup0",
                "stack+48",
                "8"
            ]
        );
        let unrestored: Vec<String> = sample()[10..14]
            .iter()
            .map(|v| v.display(None).to_string())
            .collect();
        assert_eq!(unrestored, ["IGNORE", "?", "@1", "~[-1,1]"]);
    }

    #[test]
    fn malformed_input_is_rejected_not_panicking() {
        let mut out = Vec::new();
        for v in sample() {
            v.encode(&mut out);
        }
        for cut in 0..out.len() {
            let mut r = Reader::new(&out[..cut]);
            while r.remaining() > 0 {
                if Value::decode(&mut r).is_none() {
                    break;
                }
            }
        }
        assert_eq!(
            Value::decode(&mut Reader::new(&[tag::ARRAY, 0xff, 0xff, 0x7f])),
            None
        );
        assert_eq!(Value::decode(&mut Reader::new(&[99])), None);
    }
}
