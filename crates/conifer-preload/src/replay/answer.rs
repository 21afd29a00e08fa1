//! Reading the rank's log ([`crate::msglog::wire`]) and answering one call from its entry:
//! [`Answer::begin`] reads the entry and compares the function and its inputs with the run's,
//! the output methods write what MPI wrote in the run, [`Answer::finish`] returns what the
//! call returned. The first difference ends the replay with one line saying what differed.

use crate::mpi::*;
use crate::msglog::layout::CDatatype;
use crate::msglog::layout::{self, Blocks};
use crate::msglog::pending::{self, Pending};
use crate::msglog::predefined;
use crate::msglog::wire::{self, get_signed, get_varint};
use crate::msglog::ProgramValue;
use crate::record::StatusSlot;
use conifer_format::value::HandleKind;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io::{BufReader, Read};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// The open log.
struct Reader {
    stream: zstd::stream::read::Decoder<'static, BufReader<File>>,
    /// Payloads that later entries may refer to, by number.
    payloads: HashMap<u64, Vec<u8>>,
    next_payload: u64,
    /// The rank replayed (for messages).
    rank: String,
    /// The first call that sent other data than in the run (number, function), when
    /// payload differences are not fatal ([`strict`]).
    other_data: Option<(usize, &'static str)>,
    /// Calls that sent other data than in the run.
    other_data_calls: u64,
}

/// The input name of a send's payload checksum (the generated code's).
const DATA_SENT: &str = "data sent";

/// True when a send's data differing from the run's ends the replay
/// (`CONIFER_REPLAY_STRICT=1`, `conifer replay --strict`). Otherwise it is counted and
/// reported at the end: programs that send uninitialised buffers (NetPIPE) or data read from
/// clocks or files repeat the run's calls without repeating its bytes, and each rank's replay
/// follows its own log whatever it sends.
fn strict() -> bool {
    std::env::var("CONIFER_REPLAY_STRICT").is_ok_and(|v| !v.is_empty() && v != "0")
}

static READER: LazyLock<Mutex<Reader>> = LazyLock::new(|| Mutex::new(open()));

fn fail(message: &str) -> ! {
    say!("replay: {message}");
    std::process::exit(4);
}

fn open() -> Reader {
    let path = std::env::var("CONIFER_REPLAY").unwrap_or_default();
    let file = File::open(&path)
        .unwrap_or_else(|e| fail(&format!("cannot open the message log {path}: {e}")));
    let mut stream = zstd::stream::read::Decoder::new(file)
        .unwrap_or_else(|e| fail(&format!("{path} is not a message log: {e}")));
    let mut magic = vec![0u8; wire::MAGIC.len()];
    if stream.read_exact(&mut magic).is_err() || magic != wire::MAGIC {
        fail(&format!("{path} is not a Conifer message log"));
    }
    let mut header = Vec::new();
    let mut byte = [0u8];
    while stream.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
        header.push(byte[0]);
    }
    let header = String::from_utf8_lossy(&header).into_owned();
    check_header(&path, &header);
    let rank = field(&header, "rank").unwrap_or("?").to_string();
    Reader {
        stream,
        payloads: HashMap::new(),
        next_payload: 0,
        rank,
        other_data: None,
        other_data_calls: 0,
    }
}

/// The value of `"key": value` in the header's one-line JSON.
fn field<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header.find(&format!("\"{key}\": "))? + key.len() + 4;
    let rest = &header[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim().trim_matches('"'))
}

/// Refuses a log taken with another MPI, another build of Conifer or another program.
fn check_header(path: &str, header: &str) {
    let mpi = env!("CONIFER_BUILT_FOR_MPI");
    if field(header, "mpi") != Some(mpi) {
        fail(&format!(
            "{path} was logged under {}, this replay runs {mpi}: replay with the MPI of the run",
            field(header, "mpi").unwrap_or("?")
        ));
    }
    let functions = crate::wrappers::FUNCTION_NAMES.len().to_string();
    if field(header, "functions") != Some(functions.as_str()) {
        fail(&format!(
            "{path} was logged by another build of Conifer: log the run again"
        ));
    }
    let exe = format!("{:016x}", crate::msglog::executable_checksum());
    if field(header, "executable") != Some(exe.as_str()) {
        fail(&format!("{path} was logged from another build of this program (its executable differs): replay the binary that was traced"));
    }
}

/// Fails unless the log is used up (the program made every call of the run).
pub fn check_finished() {
    let mut r = READER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((call, function)) = r.other_data {
        say!(
            "replay: rank {} sent other data than in the run in {} calls (first: call #{call}, {function}): its sends depend on more than its messages (uninitialised buffers, clocks, files); the replay followed the run's calls (--strict stops at the first)",
            r.rank,
            r.other_data_calls
        );
    }
    if get_varint(&mut r.stream).is_some() {
        // MPI_Finalize is not counted yet: its number is the count so far.
        let (rank, call) = (r.rank.clone(), super::times::calls_so_far());
        fail(&format!(
            "rank {rank} diverged at call #{call} (MPI_Finalize): the run made more calls before it"
        ));
    }
}

/// One call being answered from its entry.
pub struct Answer {
    r: MutexGuard<'static, Reader>,
    function: u16,
    ret: u64,
    /// A tag read ahead by [`Answer::completed`].
    peeked: Option<u8>,
}

impl Answer {
    /// Reads the next entry, which must be of function `function` with the same `inputs`
    /// (name and value of each).
    pub fn begin(function: u16, inputs: &[(&str, i64)]) -> Answer {
        let mut r = READER.lock().unwrap_or_else(|e| e.into_inner());
        let name = |id: u64| {
            crate::wrappers::FUNCTION_NAMES
                .get(id as usize)
                .copied()
                .unwrap_or("?")
        };
        let here = name(u64::from(function));
        let Some(logged) = get_varint(&mut r.stream) else {
            let (rank, call) = (r.rank.clone(), call_number());
            fail(&format!(
                "rank {rank} diverged at call #{call} ({here}): the run had finalised by then"
            ));
        };
        if logged != u64::from(function) {
            let (rank, call) = (r.rank.clone(), call_number());
            fail(&format!(
                "rank {rank} diverged at call #{call}: the program calls {here}, the run called {}; it does not repeat the run given the same messages",
                name(logged)
            ));
        }
        let ret = get_varint(&mut r.stream).unwrap_or_else(|| truncated());
        let n = get_varint(&mut r.stream).unwrap_or_else(|| truncated()) as usize;
        let logged_inputs: Vec<i64> = (0..n)
            .map(|_| get_signed(&mut r.stream).unwrap_or_else(|| truncated()))
            .collect();
        if logged_inputs.len() != inputs.len() {
            truncated();
        }
        for ((input, now), then) in inputs.iter().map(|(n, v)| (n, *v)).zip(logged_inputs) {
            if now == then {
                continue;
            }
            let (rank, call) = (r.rank.clone(), call_number());
            if *input == DATA_SENT && !strict() {
                r.other_data.get_or_insert((call, here));
                r.other_data_calls += 1;
                continue;
            }
            let what = if *input == DATA_SENT {
                format!("the data sent differs from the run's (checksum {now:016x}, the run's {then:016x})")
            } else {
                format!("{input} is {now}, the run had {then}")
            };
            fail(&format!(
                "rank {rank} diverged at call #{call} ({here}): {what}; the program does not repeat the run given the same messages"
            ));
        }
        Answer {
            r,
            function,
            ret,
            peeked: None,
        }
    }

    fn tag(&mut self) -> u8 {
        if let Some(tag) = self.peeked.take() {
            return tag;
        }
        let mut byte = [0u8];
        if self.r.stream.read_exact(&mut byte).is_err() {
            truncated();
        }
        byte[0]
    }

    fn varint(&mut self) -> u64 {
        get_varint(&mut self.r.stream).unwrap_or_else(|| truncated())
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        if self.r.stream.read_exact(&mut out).is_err() {
            truncated();
        }
        out
    }

    /// Writes a plain output (integers, a string) as the run got it.
    ///
    /// # Safety
    /// `ptr` is null or has room for what MPI wrote there in the run.
    pub unsafe fn raw<T>(&mut self, ptr: *mut T) {
        match self.tag() {
            wire::ABSENT => {}
            wire::RAW => {
                let n = self.varint() as usize;
                let bytes = self.bytes(n);
                if !ptr.is_null() {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.cast::<u8>(), n);
                }
            }
            _ => self.unexpected(),
        }
    }

    /// Writes statuses of either binding as the run got them (nothing where the program
    /// ignores them).
    ///
    /// # Safety
    /// As [`Answer::raw`].
    pub unsafe fn statuses<S: StatusSlot>(&mut self, ptr: *mut S) {
        let ignored = S::is_ignore(ptr) || S::is_ignore_array(ptr);
        self.raw(if ignored { std::ptr::null_mut() } else { ptr });
    }

    /// Writes handles as the run got them, predefined ones as this process's MPI names them.
    ///
    /// # Safety
    /// `ptr` is null or has room for the handles the run got.
    pub unsafe fn handles<H: ProgramValue>(&mut self, kind: HandleKind, ptr: *mut H) {
        match self.tag() {
            wire::ABSENT => {}
            wire::HANDLES => {
                let n = self.varint() as usize;
                for i in 0..n {
                    let code = self.varint();
                    let bits = if code == 0 {
                        self.varint()
                    } else {
                        predefined::value_of(kind, (code - 1) as u16).unwrap_or_else(|| {
                            fail("the log names a predefined handle this MPI lacks")
                        })
                    };
                    if !ptr.is_null() {
                        *ptr.add(i) = H::from_bits(bits);
                    }
                }
            }
            _ => self.unexpected(),
        }
    }

    /// Writes a C attribute query's value to `value` (a `void **`): a predefined attribute as a
    /// pointer to an int holding the run's value, any other as the run's pointer.
    ///
    /// # Safety
    /// `value` is null or a writable `void *`.
    pub unsafe fn attribute(&mut self, value: *mut c_void) {
        match self.tag() {
            wire::ABSENT => {}
            wire::ATTRIBUTE => {
                let pointer = match self.tag() {
                    wire::INT => {
                        let v = get_signed(&mut self.r.stream).unwrap_or_else(|| truncated());
                        int_attribute(v as c_int)
                    }
                    wire::TOKEN => self.varint() as usize as *mut c_void,
                    _ => self.unexpected(),
                };
                if !value.is_null() {
                    *(value as *mut *mut c_void) = pointer;
                }
            }
            _ => self.unexpected(),
        }
    }

    /// Writes the data a receive got into `buf`.
    ///
    /// # Safety
    /// `buf` and `datatype` describe writable memory for what the run received.
    pub unsafe fn received(&mut self, buf: *mut c_void, datatype: impl CDatatype) {
        match self.tag() {
            wire::ABSENT => {}
            wire::DATA => self.data(buf, datatype.datatype()),
            _ => self.unexpected(),
        }
    }

    unsafe fn data(&mut self, buf: *mut c_void, datatype: MPI_Datatype) {
        let n = self.varint() as usize;
        let blocks: Blocks = (0..n)
            .map(|_| {
                let displacement = get_signed(&mut self.r.stream).unwrap_or_else(|| truncated());
                (displacement, self.varint() as usize)
            })
            .collect();
        let payload = self.payload();
        layout::unpack(buf, datatype, &blocks, &payload);
    }

    fn payload(&mut self) -> Vec<u8> {
        match self.tag() {
            wire::NEW => {
                let n = self.varint() as usize;
                let bytes = self.bytes(n);
                let id = self.r.next_payload;
                self.r.next_payload += 1;
                if n >= wire::DEDUP_MIN {
                    self.r.payloads.insert(id, bytes.clone());
                }
                bytes
            }
            wire::SEEN => {
                let id = self.varint();
                self.r
                    .payloads
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| truncated())
            }
            _ => self.unexpected(),
        }
    }

    /// Writes the data of the receives this completion call finished, found by the requests
    /// its array held before the call (`saved`).
    ///
    /// # Safety
    /// The receives' buffers are writable.
    pub unsafe fn completed(&mut self, saved: &[u64]) {
        loop {
            let tag = self.tag();
            if tag != wire::COMPLETED {
                self.peeked = Some(tag);
                return;
            }
            let slot = self.varint() as usize;
            let request = saved.get(slot).copied().unwrap_or_else(|| truncated());
            let target = pending::complete(request, |p: &Pending| (p.buf, p.datatype));
            let (buf, datatype) = target
                .unwrap_or_else(|| fail("the log completes a receive this replay did not start"));
            self.data(buf, datatype);
        }
    }

    /// Ends the entry: what the call returned in the run.
    pub fn finish<R: ProgramValue>(mut self) -> R {
        if self.tag() != wire::END {
            self.unexpected();
        }
        R::from_bits(self.ret)
    }

    fn unexpected(&self) -> ! {
        let name = crate::wrappers::FUNCTION_NAMES
            .get(self.function as usize)
            .copied()
            .unwrap_or("?");
        fail(&format!(
            "the log's entry for call #{} ({name}) does not match this build's outputs: log the run again with this build",
            call_number()
        ))
    }
}

/// The number of the call being answered, from 0 as `conifer decode` numbers them.
fn call_number() -> usize {
    super::times::calls_so_far().saturating_sub(1)
}

/// A pointer to an int holding `v`, alive for the rest of the run (one per value, as MPI's
/// own attribute values live as long as the communicator).
fn int_attribute(v: c_int) -> *mut c_void {
    static VALUES: Mutex<Vec<(c_int, usize)>> = Mutex::new(Vec::new());
    let mut values = VALUES.lock().unwrap_or_else(|e| e.into_inner());
    let address = match values.iter().find(|(value, _)| *value == v) {
        Some(&(_, address)) => address,
        None => {
            let address = Box::leak(Box::new(v)) as *mut c_int as usize;
            values.push((v, address));
            address
        }
    };
    address as *mut c_void
}

fn truncated() -> ! {
    fail("the message log is truncated or corrupt: log the run again")
}
