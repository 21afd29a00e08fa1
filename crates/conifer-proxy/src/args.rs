//! One recorded call as one C statement: each parameter of the function's C binding gets an
//! expression built from its recorded value (ranks restored for the caller, symbolic handles
//! as table entries, buffers in their segment or the stack area, outputs into scratch space).

use crate::objects::{
    c_type, constructed_extent, constructed_reach_below, predefined_extent, Objects,
};
use conifer_spec::{Function, Param};
use conifer_trace::decode::Call;
use conifer_trace::predefined;
use conifer_trace::value::{Buffer, HandleKind, HandleRef, Position, Rank, Value};
use std::collections::HashMap;

/// Completion calls whose outcome depends on the order the run delivers messages in.
pub const NONDETERMINISTIC: [&str; 7] = [
    "MPI_Waitany",
    "MPI_Waitsome",
    "MPI_Testany",
    "MPI_Testsome",
    "MPI_Test",
    "MPI_Testall",
    "MPI_Iprobe",
];

/// What one rank's generation remembers between its calls.
#[derive(Default)]
pub struct RankState {
    /// Extents of the derived datatypes made so far, by symbolic id.
    extents: HashMap<u32, i64>,
    /// Lowest byte of the derived datatypes made so far, relative to the buffer, when below
    /// it (a negative displacement: HPL builds structs from address differences between its
    /// allocations), by symbolic id.
    reach_below: HashMap<u32, i64>,
    /// The request arrays last passed to each nondeterministic completion function, so that
    /// a request the original had completed (recorded as `MPI_REQUEST_NULL`) is still passed
    /// when the proxy's run completed another one first.
    last_arrays: HashMap<String, Vec<Value>>,
    /// World size, to size buffers of collectives.
    ranks: i64,
    /// Whether the last status written went into an array of statuses (`sts_`) rather than
    /// the single status (`st_`) a call reading a status is given.
    statuses_in_array: bool,
}

impl RankState {
    /// The state of a rank's first call in a run of `ranks` ranks.
    pub fn new(ranks: i64) -> RankState {
        RankState {
            ranks,
            ..RankState::default()
        }
    }
}

/// Emits calls of one rank.
pub struct Emitter<'a> {
    /// The program's objects.
    pub objects: &'a mut Objects,
    /// The rank's state.
    pub state: &'a mut RankState,
    /// What the statements made so far do differently from the original (callbacks
    /// replaced), one line each.
    pub notes: Vec<String>,
}

/// A parameter with its recorded value (inputs; outputs recorded after the call for `out`
/// parameters) and where the caller stands for it.
struct Arg<'c> {
    param: &'c Param,
    value: Option<Value>,
    at: Option<Position<'c>>,
}

impl Emitter<'_> {
    /// The C statement making `call` (`function` is its C binding); an error names what cannot
    /// be reproduced.
    pub fn statement(&mut self, call: &Call, function: &Function) -> Result<String, String> {
        let value_of = |name: &str| -> Option<(usize, &Value)> {
            let i = call.slots.iter().position(|s| s == name)?;
            Some((i, call.signature.values.get(i)?))
        };
        let mut args: Vec<Arg> = function
            .params
            .iter()
            .map(|p| {
                let found = value_of(&p.name);
                Arg {
                    param: p,
                    value: found.map(|(_, v)| v.clone()),
                    at: found.and_then(|(i, _)| call.position(i)),
                }
            })
            .collect();
        if NONDETERMINISTIC.contains(&call.name) {
            self.fill_completed(call.name, &mut args);
        }
        let mut pre = Vec::new();
        let mut post = Vec::new();
        let mut exprs = Vec::new();
        for j in 0..args.len() {
            exprs.push(self.arg(call, &args, j, &mut pre, &mut post)?);
        }
        let mut waits = self.completions(call, &args);
        waits.append(&mut post);
        let text = format!("{}({});", call.name, exprs.join(", "));
        self.track_type(call, &args);
        Ok(if pre.is_empty() && waits.is_empty() {
            text
        } else {
            format!("{{ {} {text} {} }}", pre.join(" "), waits.join(" "))
        })
    }

    /// Restores requests recorded as `MPI_REQUEST_NULL` in a nondeterministic completion call
    /// from the previous array of the same call (see [`RankState::last_arrays`]).
    fn fill_completed(&mut self, name: &str, args: &mut [Arg]) {
        let Some(a) = args
            .iter_mut()
            .find(|a| a.param.kind == "REQUEST" && a.param.length.is_some())
        else {
            return;
        };
        let Some(Value::Array(items)) = &mut a.value else {
            return;
        };
        if let Some(last) = self
            .state
            .last_arrays
            .get(name)
            .filter(|l| l.len() == items.len())
        {
            for (item, prev) in items.iter_mut().zip(last) {
                if *item == Value::Handle(HandleKind::Request, HandleRef::Named(0)) {
                    *item = prev.clone();
                }
            }
        }
        self.state
            .last_arrays
            .insert(name.to_string(), items.clone());
    }

    /// The statements making the proxy's run complete what the original's completed in a
    /// nondeterministic call, with PMPI (untraced): the requests at the recorded indices, or
    /// every request when the recorded flag says all completed.
    fn completions(&self, call: &Call, args: &[Arg]) -> Vec<String> {
        let value = |name: &str| {
            args.iter()
                .find(|a| a.param.name == name)
                .and_then(|a| a.value.clone())
        };
        let done = matches!(value("flag"), Some(Value::Int(1)));
        // A status the original received goes where the proxy's call put its own (`st_`),
        // for the calls that read it next (`MPI_Get_count`); a request the proxy's call
        // completed itself is left alone (waiting on it again would clear that status).
        let wait = |req: &str| match value("status") {
            Some(Value::Ignored) | None => format!("forced_wait_({req}, MPI_STATUS_IGNORE);"),
            Some(_) => format!("if (*{req} != MPI_REQUEST_NULL) forced_wait_({req}, &st_);"),
        };
        match call.name {
            "MPI_Test" if done => vec![wait("rq_")],
            "MPI_Testall" if done => vec!["forced_waitall_(n_, t_);".into()],
            "MPI_Testany" if done => match value("index") {
                Some(Value::Int(i)) if i >= 0 => vec![wait(&format!("&t_[{i}]"))],
                _ => Vec::new(),
            },
            "MPI_Testsome" | "MPI_Waitsome" => match value("array_of_indices") {
                Some(Value::Array(items)) if !items.is_empty() => {
                    let waits: String = items
                        .iter()
                        .filter_map(|i| match i {
                            Value::Int(i) => {
                                Some(format!("forced_wait_(&t_[{i}], MPI_STATUS_IGNORE); "))
                            }
                            _ => None,
                        })
                        .collect();
                    vec![waits.trim_end().to_string()]
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// Records the extent of the datatype a constructor made.
    fn track_type(&mut self, call: &Call, args: &[Arg]) {
        let lookup = |name: &str| {
            args.iter()
                .find(|a| a.param.name == name)
                .and_then(|a| a.value.clone())
        };
        let Some(Value::Handle(HandleKind::Datatype, HandleRef::Id(new))) = lookup("newtype")
        else {
            return;
        };
        let extents = &self.state.extents;
        let extent_of = |v: &Value| type_extent(extents, v);
        if let Some(e) = constructed_extent(call.name, &lookup, &extent_of) {
            self.state.extents.insert(new, e.max(1));
        }
        let below = &self.state.reach_below;
        let below_of = |v: &Value| type_reach_below(below, v);
        let extents = &self.state.extents;
        let extent_of = |v: &Value| type_extent(extents, v);
        match constructed_reach_below(call.name, &lookup, &extent_of, &below_of) {
            Some(low) if low < 0 => self.state.reach_below.insert(new, low),
            _ => self.state.reach_below.remove(&new),
        };
    }

    /// The expression of parameter `j`, with statements before and after the call.
    fn arg(
        &mut self,
        call: &Call,
        args: &[Arg],
        j: usize,
        pre: &mut Vec<String>,
        post: &mut Vec<String>,
    ) -> Result<String, String> {
        let a = &args[j];
        let p = a.param;
        let base = p.c_base_type.as_deref().unwrap_or("void");
        let array = p.length.is_some();
        match p.name.as_str() {
            "argc" => return Ok("&argc".into()),
            "argv" => return Ok("&argv".into()),
            _ => {}
        }
        if p.kind == "STATUS" {
            let ignored = matches!(a.value, Some(Value::Ignored));
            if p.dir == "in" && self.state.statuses_in_array {
                self.notes.push(format!(
                    "{}: reads a status the original received in an array of statuses; the proxy passes the last single status it received",
                    call.name
                ));
            } else if p.dir != "in" && !ignored {
                self.state.statuses_in_array = array;
            }
            // The status holds what the original received, whatever the proxy's call found
            // (a poll of the proxy may complete the request before the one the original
            // completed it in): the calls that read it next (`MPI_Get_count`) see the same.
            if let (Some(Value::Status(s)), false) = (&a.value, array) {
                if p.dir == "out" && s.bytes >= 0 {
                    post.push(format!(
                        "PMPI_Status_set_elements(&st_, MPI_BYTE, {});",
                        s.bytes
                    ));
                }
            }
            return Ok(match (&a.value, array) {
                (Some(Value::Ignored), true) => "MPI_STATUSES_IGNORE".into(),
                (Some(Value::Ignored), false) => "MPI_STATUS_IGNORE".into(),
                (_, true) => "sts_".into(),
                (_, false) => "&st_".into(),
            });
        }
        if p.kind.ends_with("FUNCTION") {
            let (callback, note) = callback(call.name, &p.name)?;
            self.notes.push(format!("{}: {note}", call.name));
            return Ok(callback);
        }
        if p.kind == "REQUEST" && array {
            let Some(Value::Array(items)) = &a.value else {
                return Ok("NULL".into());
            };
            let mut init = Vec::new();
            let mut back = Vec::new();
            for (k, item) in items.iter().enumerate() {
                let slot = self.value(item, p, a.at, call, args, j)?;
                // Only the proxy's own request variables take the result back: a slot the
                // original passed as `MPI_REQUEST_NULL` (or a request it never saw made)
                // is a constant.
                if matches!(item, Value::Handle(_, HandleRef::Id(_))) {
                    back.push(format!("{slot} = t_[{k}];"));
                }
                init.push(slot);
            }
            pre.push(format!(
                "MPI_Request t_[] = {{{}}}; int n_ = {}; (void)n_;",
                if init.is_empty() {
                    "MPI_REQUEST_NULL".into()
                } else {
                    init.join(", ")
                },
                items.len()
            ));
            post.push(back.join(" "));
            return Ok("t_".into());
        }
        if p.kind == "REQUEST" && p.dir == "inout" {
            let slot = match &a.value {
                Some(v @ Value::Handle(_, HandleRef::Id(_))) => {
                    self.value(v, p, a.at, call, args, j)?
                }
                _ => "o_req_".into(),
            };
            pre.push(format!("MPI_Request *rq_ = &{slot};"));
            if slot == "o_req_" {
                pre.push("o_req_ = MPI_REQUEST_NULL;".into());
            }
            return Ok("rq_".into());
        }
        if p.dir == "out" && !matches!(p.kind.as_str(), "BUFFER") {
            return Ok(match &a.value {
                Some(Value::Handle(kind, HandleRef::Id(id))) if !array => {
                    format!("&{}", self.objects.handle(*kind, *id))
                }
                Some(Value::Ignored) if p.kind == "ERROR_CODE" => "MPI_ERRCODES_IGNORE".into(),
                // An output MPI allows to be NULL; any other (older traces recorded an
                // unsuccessful `MPI_Testany`'s index as ignored) gets scratch memory.
                Some(Value::Ignored) if p.optional => "NULL".into(),
                // Each output parameter gets its own scratch slice (`outcount` and
                // `array_of_indices` must not alias).
                _ if base == "void" => format!("(void *)(o_any_ + 4096 * {})", j % 16),
                _ => format!("({base} *)(o_any_ + 4096 * {})", j % 16),
            });
        }
        let Some(value) = &a.value else {
            return Ok(if array || base == "void" {
                "NULL".into()
            } else {
                "0".into()
            });
        };
        let e = self.value(value, p, a.at, call, args, j)?;
        if p.dir == "in" && !array && handle_by_pointer(call.name) {
            return Ok(match value {
                Value::Handle(_, HandleRef::Id(_)) => format!("&{e}"),
                _ => format!("({base}[]){{{e}}}"),
            });
        }
        Ok(match value {
            Value::Handle(_, HandleRef::Id(_)) if p.dir == "inout" => format!("&{e}"),
            Value::Array(_) | Value::Coords(_) if !array => e,
            Value::Int(_) | Value::Rank(_) if p.dir == "inout" || array => {
                format!("({base}[]){{{e}}}")
            }
            _ => e,
        })
    }

    /// The expression of one value (an element, for arrays).
    fn value(
        &mut self,
        v: &Value,
        p: &Param,
        at: Option<Position>,
        call: &Call,
        args: &[Arg],
        j: usize,
    ) -> Result<String, String> {
        let base = p.c_base_type.as_deref().unwrap_or("int");
        Ok(match v {
            Value::Int(i) | Value::RankAffine { b: i, .. } => format!("{i}"),
            Value::Rank(r) => rank(*r, at)
                .ok_or_else(|| format!("{}: rank {r:?} cannot be restored", call.name))?,
            Value::Handle(kind, HandleRef::Named(n)) => predefined::names(*kind)
                .get(*n as usize)
                .map(|s| s.to_string())
                .ok_or_else(|| {
                    format!("{}: unknown predefined {} {n}", call.name, kind.prefix())
                })?,
            Value::Handle(kind, HandleRef::Id(id)) => self.objects.handle(*kind, *id),
            Value::Handle(kind, HandleRef::Unknown) => {
                format!("({}){}", c_type(*kind), null_of(*kind))
            }
            Value::Buffer(b) => self.buffer(*b, call, args, j),
            Value::Str(s) => format!("{s:?}"),
            Value::Array(items) => {
                let mut parts = Vec::new();
                for item in items {
                    parts.push(self.value(item, p, at, call, args, j)?);
                }
                if parts.is_empty() {
                    format!("({base}[1]){{0}}")
                } else {
                    format!("({base}[]){{{}}}", parts.join(", "))
                }
            }
            Value::Coords(offsets) => {
                let coords = coords(offsets, at)
                    .ok_or_else(|| format!("{}: coordinates cannot be restored", call.name))?;
                format!("(int[]){{{coords}}}")
            }
            Value::Ignored => "NULL".into(),
            Value::Opaque => {
                self.notes.push(format!(
                    "{}: {} was not recorded; the proxy passes 0",
                    call.name, p.name
                ));
                "0".into()
            }
            Value::Status(_) => "0".into(),
            Value::StreamedInt
            | Value::StreamedOffset(_)
            | Value::StreamedStatus(..)
            | Value::StreamedRequests(..)
            | Value::StreamedOutputs => {
                return Err(format!("{}: an unfilled stream value", call.name))
            }
            Value::RankColumn(_)
            | Value::RankStatus { .. }
            | Value::RankBuffer { .. }
            | Value::RankHandle { .. } => {
                return Err(format!("{}: an unresolved per-rank value", call.name))
            }
        })
    }

    /// A buffer expression, its segment sized for this use.
    fn buffer(&mut self, b: Buffer, call: &Call, args: &[Arg], j: usize) -> String {
        match b {
            Buffer::Null => "NULL".into(),
            Buffer::InPlace => "MPI_IN_PLACE".into(),
            Buffer::Bottom => "MPI_BOTTOM".into(),
            Buffer::Segment { id, offset } => {
                let bytes = self.bytes_used(call, args, j);
                let below = args[j + 1..]
                    .iter()
                    .find(|a| a.param.kind == "DATATYPE")
                    .and_then(|a| a.value.as_ref())
                    .map_or(0, |v| type_reach_below(&self.state.reach_below, v));
                self.objects.segment(id, offset, bytes, below)
            }
            Buffer::Stack { offset } => {
                let bytes = self.bytes_used(call, args, j);
                self.objects.stack(offset, bytes)
            }
        }
    }

    /// Bytes a buffer parameter `j` spans: its count (or counts and displacements) times its
    /// datatype's extent, for every rank in collectives that gather or scatter.
    fn bytes_used(&self, call: &Call, args: &[Arg], j: usize) -> i64 {
        let after = &args[j + 1..];
        let ints = |a: &Arg| -> Vec<i64> {
            match &a.value {
                Some(Value::Int(v)) => vec![*v],
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| if let Value::Int(v) = i { *v } else { 0 })
                    .collect(),
                _ => Vec::new(),
            }
        };
        let count = after
            .iter()
            .find(|a| a.param.kind.contains("NUM_ELEM") || a.param.kind.contains("COUNT"))
            .map_or(0, |a| ints(a).iter().sum::<i64>());
        let displs = after
            .iter()
            .take_while(|a| a.param.kind != "DATATYPE")
            .find(|a| a.param.kind.contains("DISPLACEMENT"))
            .map_or(0, |a| ints(a).into_iter().max().unwrap_or(0));
        let extent = after
            .iter()
            .find(|a| a.param.kind == "DATATYPE")
            .and_then(|a| a.value.as_ref())
            .map_or(1, |v| type_extent(&self.state.extents, v));
        let name = call.name.to_ascii_lowercase();
        let per_rank = ["gather", "scatter", "alltoall", "reduce_scatter"]
            .iter()
            .any(|c| name.contains(c));
        let n = if per_rank {
            count * self.state.ranks.max(1)
        } else {
            count
        };
        (n + displs).max(0) * extent + 64
    }
}

/// The C expression passed for callback parameter `param` of `function`, and what the proxy
/// does differently for it; an error for callbacks the proxy cannot stand in for.
fn callback(function: &str, param: &str) -> Result<(String, &'static str), String> {
    let object = ["comm", "type", "win"]
        .into_iter()
        .find(|o| param.starts_with(o))
        .map_or(String::new(), |o| format!("{}_", o.to_ascii_uppercase()));
    Ok(if function == "MPI_Op_create" {
        (
            "proxy_op".into(),
            "the user's reduction function is replaced by one that leaves the buffer as it is",
        )
    } else if param.contains("copy") {
        (
            format!("MPI_{object}NULL_COPY_FN"),
            "the attribute copy callback is replaced by MPI's null copy function",
        )
    } else if param.contains("delete") {
        (
            format!("MPI_{object}NULL_DELETE_FN"),
            "the attribute delete callback is replaced by MPI's null delete function",
        )
    } else if param.contains("errhandler") || function == "MPI_Errhandler_create" {
        (
            "(void *)proxy_errhandler".into(),
            "the error handler is replaced by one that does nothing",
        )
    } else {
        return Err(format!(
            "{function}: its callback {param} cannot be reproduced"
        ));
    })
}

/// The extent of a datatype value: predefined by name, derived from its constructor.
/// True for the functions whose one input handle C passes by pointer (`MPI_Cancel(MPI_Request
/// *request)`), though the standard lists it as an input.
fn handle_by_pointer(function: &str) -> bool {
    function == "MPI_Cancel"
}

/// How far below the buffer a datatype value reaches (0 or negative): predefined types
/// never do.
fn type_reach_below(reach_below: &HashMap<u32, i64>, v: &Value) -> i64 {
    match v {
        Value::Handle(HandleKind::Datatype, HandleRef::Id(id)) => {
            reach_below.get(id).copied().unwrap_or(0)
        }
        _ => 0,
    }
}

fn type_extent(extents: &HashMap<u32, i64>, v: &Value) -> i64 {
    match v {
        Value::Handle(HandleKind::Datatype, HandleRef::Named(n)) => {
            predefined::names(HandleKind::Datatype)
                .get(*n as usize)
                .map_or(32, |name| predefined_extent(name))
        }
        Value::Handle(HandleKind::Datatype, HandleRef::Id(id)) => {
            extents.get(id).copied().unwrap_or(4096)
        }
        _ => 32,
    }
}

/// The null handle's name of `kind`.
fn null_of(kind: HandleKind) -> &'static str {
    predefined::names(kind).first().copied().unwrap_or("0")
}

/// A rank value restored for the caller standing at `at`, as C.
pub fn rank(r: Rank, at: Option<Position>) -> Option<String> {
    Some(match r {
        Rank::AnySource => "MPI_ANY_SOURCE".into(),
        Rank::ProcNull => "MPI_PROC_NULL".into(),
        Rank::Root => "MPI_ROOT".into(),
        Rank::Undefined => "MPI_UNDEFINED".into(),
        Rank::Absolute(a) => a.to_string(),
        Rank::Grid(d) => {
            let me = at?;
            me.grid?.displaced(me.rank, d)?.to_string()
        }
        r => r.peer_of(at?.rank)?.to_string(),
    })
}

/// Absolute coordinates from offsets relative to the caller's own, as a C list.
fn coords(offsets: &[i64], at: Option<Position>) -> Option<String> {
    let me = at?;
    let grid = me.grid?;
    let mine = grid.coords(me.rank)?;
    let parts: Vec<String> = offsets
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let c = mine.get(i).copied().unwrap_or(0) + o;
            let dim = grid.dims.get(i).copied().unwrap_or(1).max(1);
            if grid.periods.get(i).copied().unwrap_or(false) {
                c.rem_euclid(dim)
            } else {
                c
            }
        })
        .map(|c| c.to_string())
        .collect();
    Some(parts.join(", "))
}
