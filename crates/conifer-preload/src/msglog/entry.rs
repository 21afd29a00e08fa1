//! The log of one rank and the entry of one call: the writer holds the zstd stream and the
//! table of payloads seen; an [`Entry`] holds the writer while the wrapper adds the call's
//! outputs, so entries of concurrent threads never interleave.

use super::completion::Outcome;
use super::layout::{self, Blocks, CDatatype};
use super::pending::{self, Pending};
use super::predefined;
use super::value::ProgramValue;
use super::wire::{self, put_signed, put_varint};
use crate::mpi::*;
use crate::record::StatusSlot;
use conifer_format::value::HandleKind;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Mutex, MutexGuard};

/// What a rank's log holds so far.
#[derive(Default, Clone, Copy)]
pub struct Totals {
    /// Entries (calls answered from the log).
    pub entries: u64,
    /// Bytes of received data logged, before deduplication.
    pub data_bytes: u64,
    /// Bytes of received data written (payloads not seen before).
    pub unique_bytes: u64,
}

/// A rank's open log.
pub struct Writer {
    stream: zstd::stream::write::Encoder<'static, BufWriter<File>>,
    scratch: Vec<u8>,
    packed: Vec<u8>,
    seen: HashMap<(u64, usize), u64>,
    payloads: u64,
    totals: Totals,
}

static WRITER: Mutex<Option<Writer>> = Mutex::new(None);

/// Opens the log at `path`, its header naming the run (`header`).
pub fn open(path: &std::path::Path, header: &str) -> std::io::Result<()> {
    let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut stream = zstd::stream::write::Encoder::new(file, 3)?;
    stream.write_all(wire::MAGIC)?;
    stream.write_all(header.as_bytes())?;
    stream.write_all(b"\n")?;
    *WRITER.lock().unwrap_or_else(|e| e.into_inner()) = Some(Writer {
        stream,
        scratch: Vec::new(),
        packed: Vec::new(),
        seen: HashMap::new(),
        payloads: 0,
        totals: Totals::default(),
    });
    Ok(())
}

/// Finishes the log; what it holds, or `None` when none was open or it could not be written.
pub fn close() -> Option<Totals> {
    let writer = WRITER.lock().unwrap_or_else(|e| e.into_inner()).take()?;
    let totals = writer.totals;
    let mut file = writer.stream.finish().ok()?;
    file.flush().ok()?;
    Some(totals)
}

/// The entry of one call being logged.
pub struct Entry {
    writer: MutexGuard<'static, Option<Writer>>,
}

impl Entry {
    /// Starts the entry of function `function` that returned `ret` (its bits), with the
    /// integer inputs the replay compares; `None` when no log is open.
    pub fn begin(function: u16, ret: u64, inputs: &[i64]) -> Option<Entry> {
        let mut guard = WRITER.lock().unwrap_or_else(|e| e.into_inner());
        let w = guard.as_mut()?;
        w.scratch.clear();
        put_varint(&mut w.scratch, u64::from(function));
        put_varint(&mut w.scratch, ret);
        put_varint(&mut w.scratch, inputs.len() as u64);
        for &v in inputs {
            put_signed(&mut w.scratch, v);
        }
        Some(Entry { writer: guard })
    }

    fn w(&mut self) -> &mut Writer {
        self.writer
            .as_mut()
            .expect("an entry exists only while the log is open")
    }

    /// `n` values of type `T` at `ptr`, verbatim (nothing when `ptr` is null).
    ///
    /// # Safety
    /// `ptr` is null or points to `n` readable values.
    pub unsafe fn raw<T>(&mut self, ptr: *const T, n: usize) {
        let out = &mut self.w().scratch;
        if ptr.is_null() {
            out.push(wire::ABSENT);
            return;
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), n * std::mem::size_of::<T>());
        out.push(wire::RAW);
        put_varint(out, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }

    /// `n` statuses of either binding at `ptr` (absent when it is null or an ignore
    /// sentinel).
    ///
    /// # Safety
    /// As [`Entry::raw`].
    pub unsafe fn statuses<S: StatusSlot>(&mut self, ptr: *const S, n: usize) {
        let ignored = S::is_ignore(ptr) || S::is_ignore_array(ptr);
        self.raw(if ignored { std::ptr::null() } else { ptr }, n);
    }

    /// A NUL-terminated string MPI wrote at `ptr`, with its NUL.
    ///
    /// # Safety
    /// `ptr` is null or a NUL-terminated string.
    pub unsafe fn string(&mut self, ptr: *const c_char) {
        let n = if ptr.is_null() {
            0
        } else {
            std::ffi::CStr::from_ptr(ptr).to_bytes_with_nul().len()
        };
        self.raw(ptr.cast::<u8>(), n);
    }

    /// `n` handles of `kind` at `ptr`, predefined ones by name.
    ///
    /// # Safety
    /// `ptr` is null or points to `n` handles.
    pub unsafe fn handles<H: ProgramValue>(&mut self, kind: HandleKind, ptr: *const H, n: usize) {
        let out = &mut self.w().scratch;
        if ptr.is_null() {
            out.push(wire::ABSENT);
            return;
        }
        out.push(wire::HANDLES);
        put_varint(out, n as u64);
        for i in 0..n {
            let bits = (*ptr.add(i)).to_bits();
            match predefined::code_of(kind, bits) {
                Some(code) => put_varint(out, u64::from(code) + 1),
                None => {
                    out.push(0);
                    put_varint(out, bits);
                }
            }
        }
    }

    /// The data a receive put in `buf` (`blocks` of `datatype`).
    ///
    /// # Safety
    /// `buf` and `datatype` describe memory MPI wrote for every block.
    pub unsafe fn received(
        &mut self,
        buf: *const c_void,
        datatype: impl CDatatype,
        blocks: &Blocks,
    ) {
        self.w().scratch.push(wire::DATA);
        self.data(buf, datatype.datatype(), blocks);
    }

    /// The value a C attribute query wrote to `value` (a `void **`) for `keyval`, when `flag`
    /// says it found one: a predefined attribute by the int it points to, any other by the
    /// pointer itself.
    ///
    /// # Safety
    /// `value` and `flag` are the query's outputs, after it returned.
    pub unsafe fn attribute(&mut self, value: *const c_void, keyval: c_int, flag: *const c_int) {
        let out = &mut self.w().scratch;
        if value.is_null() || flag.is_null() || *flag == 0 {
            out.push(wire::ABSENT);
            return;
        }
        let pointer = *(value as *const *const c_int);
        out.push(wire::ATTRIBUTE);
        if conifer_int_comm_keyval(keyval) != 0 && !pointer.is_null() {
            out.push(wire::INT);
            put_signed(out, i64::from(*pointer));
        } else {
            out.push(wire::TOKEN);
            put_varint(out, pointer as usize as u64);
        }
    }

    /// Nothing for an output significant elsewhere (a root-only buffer on another rank).
    pub fn absent(&mut self) {
        self.w().scratch.push(wire::ABSENT);
    }

    unsafe fn data(&mut self, buf: *const c_void, datatype: MPI_Datatype, blocks: &Blocks) {
        let w = self.w();
        put_varint(&mut w.scratch, blocks.len() as u64);
        for &(displacement, count) in blocks {
            put_signed(&mut w.scratch, displacement);
            put_varint(&mut w.scratch, count as u64);
        }
        let mut packed = std::mem::take(&mut w.packed);
        packed.clear();
        layout::pack(buf, datatype, blocks, &mut packed);
        w.payload(&packed);
        w.packed = packed;
    }

    /// The data of the receives this completion call finished, from the requests its array
    /// held before the call (`saved`).
    ///
    /// # Safety
    /// `outcome` holds the call's own arguments after it returned.
    pub unsafe fn completed<S: StatusSlot>(&mut self, saved: &[u64], outcome: &Outcome<S>) {
        for (slot, status) in outcome.completed() {
            let Some(&request) = saved.get(slot) else {
                continue;
            };
            let found = pending::complete(request, |p: &Pending| {
                let blocks = match layout::status_count(status, p.datatype) {
                    Some(got) if p.point_to_point => {
                        vec![(0, got.min(p.blocks.first().map_or(0, |b| b.1)))]
                    }
                    _ => p.blocks.clone(),
                };
                (p.buf, p.datatype, blocks)
            });
            if let Some((buf, datatype, blocks)) = found {
                self.w().scratch.push(wire::COMPLETED);
                put_varint(&mut self.w().scratch, slot as u64);
                self.data(buf, datatype, &blocks);
            }
        }
    }

    /// Ends the entry and appends it to the log.
    pub fn commit(mut self) {
        let w = self.w();
        w.scratch.push(wire::END);
        w.totals.entries += 1;
        // A log that cannot be written stops: the run goes on; the replay reports the end.
        if w.stream.write_all(&w.scratch).is_err() {
            *self.writer = None;
        }
    }
}

impl Writer {
    /// Writes a payload, or a reference to the same bytes written before.
    fn payload(&mut self, bytes: &[u8]) {
        self.totals.data_bytes += bytes.len() as u64;
        if bytes.len() >= wire::DEDUP_MIN {
            let key = (wire::checksum(bytes), bytes.len());
            if let Some(&id) = self.seen.get(&key) {
                self.scratch.push(wire::SEEN);
                put_varint(&mut self.scratch, id);
                return;
            }
            self.seen.insert(key, self.payloads);
        }
        self.payloads += 1;
        self.totals.unique_bytes += bytes.len() as u64;
        self.scratch.push(wire::NEW);
        put_varint(&mut self.scratch, bytes.len() as u64);
        self.scratch.extend_from_slice(bytes);
    }
}
