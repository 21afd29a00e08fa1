//! Generates, for each wrapped C function, the code that records its arguments: inputs before
//! the PMPI call (the prologue), outputs after it (the epilogue). The semantic kind, direction
//! and array length of each parameter come from the spec table; the C type from `mpi.h`.
//! What the generator cannot interpret safely it records as opaque, never guessing at memory.

use crate::arg_types::{shape, Base, Shape};
use conifer_spec::{Function, Param};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::{FnArg, Pat, Signature, Type};

/// Recording code of one function and the names of the values it records, in order.
pub struct Encoding {
    /// Runs before the PMPI call.
    pub prologue: TokenStream,
    /// Runs after the PMPI call.
    pub epilogue: TokenStream,
    /// Parameter name of each recorded value, prologue values first.
    pub slots: Vec<String>,
    /// The raw argument values that alone decide what the prologue records (an array
    /// expression of `u64`s), when there are such: see [`input_memo_key`].
    pub memo_key: Option<TokenStream>,
}

/// The raw inputs of a poll (a call that checks for a completion or a message and, finding
/// none, clears its `flag` and changes nothing): its integer and handle arguments, and its
/// array of in-out handles with its length.
pub struct PollKey {
    /// An array expression of `u64`s.
    pub scalars: TokenStream,
    /// The in-out handle array (a null pointer when there is none).
    pub handles: TokenStream,
    /// Its length.
    pub len: TokenStream,
}

/// The functions [`poll_key`] keys: each leaves every request and object as it was when it
/// clears its flag, and then records nothing but the flag among its outputs.
const POLLS: &[&str] = &[
    "MPI_Test",
    "MPI_Testany",
    "MPI_Testall",
    "MPI_Iprobe",
    "MPI_Improbe",
    "MPI_Request_get_status",
];

/// The key of a poll ([`POLLS`]), so that a poll repeating the thread's previous call is
/// recorded as it (see `record/poll_repeat.rs`). Panics when a poll takes an input the key
/// cannot hold: the list and the standard disagree.
pub fn poll_key(function: &str, sig: &Signature, spec: Option<&Function>) -> Option<PollKey> {
    if !POLLS.contains(&function) {
        return None;
    }
    let args = &args(sig, spec);
    let mut scalars = Vec::new();
    let mut handles = None;
    for arg in args {
        let id = &arg.ident;
        let dir = arg.spec.as_ref().map_or("unknown", |s| s.dir.as_str());
        match (shape(&arg.ty), dir) {
            (Shape::Value(Base::Handle(_)), _) => scalars.push(quote! { crate::record::bits(#id) }),
            (Shape::Value(Base::Int), _) => scalars.push(quote! { #id as i64 as u64 }),
            (Shape::Pointer { .. }, "out") => {}
            (
                Shape::Pointer {
                    base: Base::Handle(_),
                    mutable: true,
                },
                "inout",
            ) if handles.is_none() => {
                let len = match arg.spec.as_ref().is_some_and(|s| s.length.is_some()) {
                    true => length(function, args, arg, false)
                        .unwrap_or_else(|| panic!("{function}: no length for {id}")),
                    false => quote! { 1usize },
                };
                handles = Some((quote! { #id }, len));
            }
            _ => panic!("{function}: the poll key cannot hold {id}"),
        }
    }
    let (handles, len) = handles.unwrap_or((
        quote! { ::std::ptr::null::<::std::os::raw::c_int>() },
        quote! { 0usize },
    ));
    Some(PollKey {
        scalars: quote! { [#(#scalars),*] },
        handles,
        len,
    })
}

impl PollKey {
    /// The inputs `inputs` of poll `id`, skipped when it repeats the thread's previous call.
    pub fn skip_repeated_inputs(&self, id: u16, inputs: &TokenStream) -> TokenStream {
        let PollKey {
            scalars,
            handles,
            len,
        } = self;
        quote! {
            if !rec.repeats_poll(#id, &#scalars, #handles, #len) { #inputs rec.end_poll_inputs(); }
        }
    }

    /// The end of a poll that returned the local `ret`: appended as the previous call when it
    /// repeats it and again finds nothing, else its outputs encoded by `epilogue`.
    pub fn finish(epilogue: &TokenStream, ret: &TokenStream) -> TokenStream {
        quote! {
            let quiet = crate::record::flag_clear(flag);
            if !rec.finish_repeated_poll(quiet, &#ret) { #epilogue rec.finish_poll(&#ret, quiet); }
        }
    }
}

/// Most raw words an input memo key holds (`MPI_Sendrecv` has 11).
const MEMO_KEY_WORDS: usize = 12;

/// Fewest raw words worth a memo: encoding one or two values costs less than looking up and
/// copying a remembered encoding.
const MEMO_MIN_WORDS: usize = 3;

/// The raw values that decide a function's prologue, when nothing but them and the recorder's
/// object tables does: its integer and handle arguments and its buffer addresses. `None`
/// when the prologue reads memory through a pointer (arrays, strings, in-out handles), or
/// names a request by value (request ids change as requests come and go), or when there is
/// too little to encode to be worth it.
fn input_memo_key(args: &[Arg]) -> Option<TokenStream> {
    let mut words = Vec::new();
    for arg in args {
        let id = &arg.ident;
        let dir = arg.spec.as_ref().map_or("unknown", |s| s.dir.as_str());
        match shape(&arg.ty) {
            Shape::Value(Base::Handle("Request")) => return None,
            Shape::Value(Base::Handle(_)) => words.push(quote! { crate::record::bits(#id) }),
            Shape::Value(Base::Int) => words.push(quote! { #id as i64 as u64 }),
            Shape::Pointer {
                base: Base::Void, ..
            } if is_buffer(arg) => words.push(quote! { #id as usize as u64 }),
            // Recorded as opaque, or read only after the call.
            Shape::Value(_)
            | Shape::Other
            | Shape::Pointer {
                base: Base::Void, ..
            } => {}
            Shape::Pointer { .. } if dir == "out" => {}
            Shape::Pointer { .. } => return None,
        }
    }
    (MEMO_MIN_WORDS..=MEMO_KEY_WORDS)
        .contains(&words.len())
        .then(|| quote! { [#(#words),*] })
}

/// True for a buffer argument (its address is recorded, never its contents).
pub fn is_buffer(arg: &Arg) -> bool {
    arg.spec
        .as_ref()
        .is_some_and(|s| s.kind == "BUFFER" || s.kind.starts_with("C_BUFFER"))
}

/// A wrapped function's parameter: its name, C type and entry in the spec (when the header
/// and the standard agree on the parameters).
pub struct Arg {
    /// The parameter's name in `mpi.h`.
    pub ident: Ident,
    /// Its C type as bindgen rendered it.
    pub ty: Type,
    /// The standard's description of it.
    pub spec: Option<Param>,
}

/// The parameters of `sig`, paired with the spec's by position.
pub fn args(sig: &Signature, spec: Option<&Function>) -> Vec<Arg> {
    let c_params: Vec<&FnArg> = sig.inputs.iter().collect();
    // Pair by position only when the header and the standard agree on the parameter count.
    let spec_params = spec
        .map(|f| &f.params)
        .filter(|p| p.len() == c_params.len());
    c_params
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            FnArg::Typed(t) => match &*t.pat {
                Pat::Ident(id) => Some(Arg {
                    ident: id.ident.clone(),
                    ty: (*t.ty).clone(),
                    spec: spec_params.map(|p| p[i].clone()),
                }),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The `HandleKind` variant of a handle kind name, as an expression.
pub fn kind_ident(kind: &str) -> TokenStream {
    let k = Ident::new(kind, Span::call_site());
    quote! { conifer_format::value::HandleKind::#k }
}

fn is_rank(p: &Param) -> bool {
    matches!(p.kind.as_str(), "RANK" | "RANK_NNI")
}

/// The address `MPI_Get_address` (and MPI-1's `MPI_Address`) returns: recorded as the buffer
/// it points into, like the `location` it came from.
fn is_address_output(function: &str, p: &Param) -> bool {
    matches!(function, "MPI_Get_address" | "MPI_Address") && p.name == "address"
}

/// Rank parameters the standard requires every member to pass with the same value (roots of
/// collectives, leaders of `MPI_Intercomm_create`): recorded absolute, so all members agree.
fn is_same_on_every_member(p: &Param) -> bool {
    p.dir == "in" && matches!(p.name.as_str(), "root" | "local_leader" | "remote_leader")
}

/// The communicator a parameter refers to: the nearest communicator parameter before it, else
/// the first one (`Intercomm_create`'s `remote_leader` is a rank in `peer_comm`). For ranks
/// (`groups`), groups and windows count as well: `MPI_Group_translate_ranks` gives ranks of
/// its groups, `MPI_Put`'s `target_rank` is a rank in its window's group.
///
/// Without one, `fallback`: `None`, or for file I/O `crate::record::FILE_IO`, so its statuses
/// and requests are known to carry no message source.
fn comm_for(args: &[Arg], index: usize, groups: bool, fallback: &TokenStream) -> TokenStream {
    let is_comm = |a: &Arg| match shape(&a.ty) {
        Shape::Value(Base::Handle("Comm")) => true,
        Shape::Value(Base::Handle("Group" | "Win")) => groups,
        _ => false,
    };
    let found = args[..index]
        .iter()
        .rev()
        .find(|a| is_comm(a))
        .or_else(|| args.iter().find(|a| is_comm(a)));
    match found {
        Some(a) => {
            let id = &a.ident;
            quote! { Some(crate::record::bits(#id)) }
        }
        None => fallback.clone(),
    }
}

/// Names of arrays whose length is the communicator's group size in the v/w collectives.
const PER_PEER_ARRAYS: [&str; 7] = [
    "sendcounts",
    "recvcounts",
    "displs",
    "sdispls",
    "rdispls",
    "sendtypes",
    "recvtypes",
];

/// The length of an array parameter as an expression, or `None` when it cannot be known safely
/// (group sizes and grid dimensions are asked of the recorder, `rec`).
pub fn length(function: &str, args: &[Arg], arg: &Arg, after_call: bool) -> Option<TokenStream> {
    let spec = arg.spec.as_ref()?;
    let extents = spec.length.as_ref()?;
    let mut factors = Vec::new();
    for extent in extents {
        if let Ok(n) = extent.parse::<usize>() {
            factors.push(quote! { #n });
            continue;
        }
        if let Some(other) = args.iter().find(|a| a.ident == extent.as_str()) {
            let id = &other.ident;
            match shape(&other.ty) {
                Shape::Value(Base::Int) => factors.push(quote! { (#id as i64).max(0) as usize }),
                Shape::Pointer {
                    base: Base::Int, ..
                } if after_call => factors.push(quote! { crate::record::read_len(#id) }),
                _ => return None,
            }
            continue;
        }
        // Completion outputs: as many as completed (`outcount`) or as requests were passed.
        if extent == "*" && matches!(spec.name.as_str(), "array_of_statuses" | "array_of_indices") {
            let completed = args.iter().find(|a| a.ident == "outcount");
            let requests = args.iter().find(|a| a.ident == "array_of_requests");
            match (completed, requests) {
                (Some(out), _) if after_call => {
                    let id = &out.ident;
                    factors.push(quote! { crate::record::read_len(#id) });
                    continue;
                }
                (None, Some(requests)) => {
                    factors.push(length(function, args, requests, after_call)?);
                    continue;
                }
                _ => return None,
            }
        }
        // One entry per dimension of the communicator's Cartesian grid.
        if extent == "*" && matches!(spec.name.as_str(), "coords" | "remain_dims") {
            let comm = args
                .iter()
                .find(|a| matches!(shape(&a.ty), Shape::Value(Base::Handle("Comm"))))?;
            let id = &comm.ident;
            factors.push(quote! { rec.grid_dims(#id) });
            continue;
        }
        // `MPI_Dist_graph_create`'s destinations: as many as its `n` degrees add up to.
        if extent == "*" && spec.name == "destinations" {
            let degrees = &args.iter().find(|a| a.ident == "degrees")?.ident;
            let n = &args.iter().find(|a| a.ident == "n")?.ident;
            factors.push(quote! { crate::record::sum_len(#degrees, #n) });
            continue;
        }
        // A graph's edges: `index[nnodes - 1]` of them.
        if extent == "*" && spec.name == "edges" {
            // MPICH's header calls it `indx`.
            let index = &args
                .iter()
                .find(|a| a.ident == "index" || a.ident == "indx")?
                .ident;
            let nnodes = &args.iter().find(|a| a.ident == "nnodes")?.ident;
            factors.push(quote! { crate::record::last_len(#index, #nnodes) });
            continue;
        }
        let collective_v =
            !function.contains("neighbor") && PER_PEER_ARRAYS.contains(&spec.name.as_str());
        if extent == "*" && collective_v {
            let comm = args
                .iter()
                .find(|a| matches!(shape(&a.ty), Shape::Value(Base::Handle("Comm"))))?;
            let id = &comm.ident;
            factors.push(quote! { rec.peer_count(#id) });
            continue;
        }
        return None;
    }
    let mut factors = factors.into_iter();
    let first = factors.next()?;
    // Each factor is a method call, a cast or a literal: all bind tighter than `*`.
    Some(factors.fold(first, |product, f| quote! { #product * #f }))
}

/// The root rank test for parameters significant at the root only.
fn root_guard(args: &[Arg]) -> Option<TokenStream> {
    let root = args.iter().find(|a| a.ident == "root")?;
    let comm = args
        .iter()
        .find(|a| matches!(shape(&a.ty), Shape::Value(Base::Handle("Comm"))))?;
    let (r, c) = (&root.ident, &comm.ident);
    Some(quote! { rec.is_root(#r as i64, crate::record::bits(#c)) })
}

/// Generates the recording code of one function. For a Fortran procedure, `fortran_strings`
/// names the hidden length argument of each CHARACTER parameter (its text is not
/// NUL-terminated).
pub fn encoding(
    name: &str,
    sig: &Signature,
    spec: Option<&Function>,
    fortran_strings: &[(String, Ident)],
) -> Encoding {
    let args = args(sig, spec);
    let mut prologue = Vec::new();
    let mut epilogue = Vec::new();
    let (mut pro_slots, mut epi_slots) = (Vec::new(), Vec::new());
    let has_flag = args
        .iter()
        .any(|a| a.ident == "flag" && a.spec.as_ref().is_some_and(|s| s.dir == "out"));
    let no_comm = if name.to_ascii_lowercase().starts_with("mpi_file_") {
        quote! { Some(crate::record::FILE_IO) }
    } else {
        quote! { None }
    };
    for (i, arg) in args.iter().enumerate() {
        let id = &arg.ident;
        let pname = arg
            .spec
            .as_ref()
            .map(|s| s.name.clone())
            .unwrap_or_else(|| id.to_string());
        let dir = arg
            .spec
            .as_ref()
            .map(|s| s.dir.as_str())
            .unwrap_or("unknown");
        let ranky = arg.spec.as_ref().is_some_and(is_rank);
        let comm = comm_for(&args, i, ranky, &no_comm);
        let root_only = arg.spec.as_ref().is_some_and(|s| s.root_only);
        let same_on_every_member = arg.spec.as_ref().is_some_and(is_same_on_every_member);
        let (code, after) = match (shape(&arg.ty), dir) {
            (Shape::Value(Base::Int), _) if ranky && same_on_every_member => {
                (quote! { rec.absolute_rank(#id as i64); }, false)
            }
            (Shape::Value(Base::Int), _) if ranky => {
                (quote! { rec.rank(#id as i64, #comm); }, false)
            }
            (Shape::Value(Base::Int), _) if arg.spec.as_ref().is_some_and(|s| s.kind == "KEY") => {
                (quote! { rec.key(#id as i64, #comm); }, false)
            }
            (Shape::Value(Base::Int), _) if arg.spec.as_ref().is_some_and(|s| s.kind == "TAG") => {
                (quote! { rec.tag(#id as i64, #comm); }, false)
            }
            (Shape::Value(Base::Int), _) => (quote! { rec.int(#id as i64); }, false),
            (Shape::Value(Base::Handle(kind)), _) => {
                let k = kind_ident(kind);
                (quote! { rec.handle(#k, crate::record::bits(#id)); }, false)
            }
            (
                Shape::Pointer {
                    base: Base::Void, ..
                },
                _,
            ) if is_buffer(arg) => (
                quote! { rec.buffer(#id as *const ::std::ffi::c_void); },
                false,
            ),
            (
                Shape::Pointer {
                    base: Base::Char,
                    mutable,
                },
                dir,
            ) if !mutable || dir == "out" => {
                let code = match fortran_strings.iter().find(|(p, _)| *p == pname) {
                    Some((_, len)) => {
                        quote! { rec.fortran_string(#id as *const ::std::ffi::c_char, #len); }
                    }
                    None => quote! { rec.string(#id as *const ::std::ffi::c_char); },
                };
                (code, mutable)
            }
            (Shape::Pointer { base, .. }, dir) => {
                // Outputs are read after the call; inputs and in-out values before it.
                let after = dir == "out";
                match pointer_code(name, &args, arg, base, dir, after, ranky, &comm) {
                    Some(code) => (code, after),
                    None => (quote! { rec.opaque(); }, false),
                }
            }
            _ => (quote! { rec.opaque(); }, false),
        };
        // A root-only buffer is recorded on every rank as passed (only its address is read,
        // so a dangling one is safe): the program passes the same variable everywhere, and
        // the root's calls then agree with the others'. Root-only counts, types and arrays
        // are read only on the root (elsewhere they may point anywhere).
        let guarded = match (root_only && !is_buffer(arg), root_guard(&args)) {
            (true, Some(guard)) => quote! { if #guard { #code } else { rec.ignored(); } },
            _ => code,
        };
        // `MPI_Testany` sets its index whatever the flag (`MPI_UNDEFINED` when none completed).
        // (MPICH's header calls it `indx`: the standard's name is the spec's.)
        let always = name == "MPI_Testany" && arg.spec.as_ref().is_some_and(|s| s.name == "index");
        let guarded = if after && has_flag && arg.ident != "flag" && !always {
            quote! { if crate::record::flag_set(flag) { #guarded } else { rec.ignored(); } }
        } else {
            guarded
        };
        if after {
            epilogue.push(guarded);
            epi_slots.push(pname.clone());
        } else {
            prologue.push(guarded);
            pro_slots.push(pname.clone());
        }
        if dir == "inout" {
            // In-out integers (e.g. `MPI_Dims_create`'s dims) are recorded again after the call.
            if let (
                Shape::Pointer {
                    base: Base::Int,
                    mutable: true,
                },
                Some(len),
            ) = (shape(&arg.ty), length(name, &args, arg, true))
            {
                epilogue.push(quote! { { let len = #len; rec.ints(#id, len); } });
                epi_slots.push(format!("{pname}_out"));
            }
            if let Shape::Pointer {
                base: Base::Handle(kind),
                mutable: true,
            } = shape(&arg.ty)
            {
                let k = kind_ident(kind);
                let len = length(name, &args, arg, true).unwrap_or(quote! { 1usize });
                epilogue.push(quote! { { let len = #len; rec.release_completed(#k, #id, len); } });
            }
        }
    }
    pro_slots.extend(epi_slots);
    Encoding {
        prologue: quote! { #(#prologue)* },
        epilogue: quote! { #(#epilogue)* },
        slots: pro_slots,
        memo_key: input_memo_key(&args),
    }
}

#[allow(clippy::too_many_arguments)]
fn pointer_code(
    function: &str,
    args: &[Arg],
    arg: &Arg,
    base: Base,
    dir: &str,
    after: bool,
    ranky: bool,
    comm: &TokenStream,
) -> Option<TokenStream> {
    let id = &arg.ident;
    let len = length(function, args, arg, after);
    let spec = arg.spec.as_ref()?;
    let array = spec.length.is_some();
    Some(match (base, array, dir) {
        (Base::Int, false, "out") if ranky => quote! { rec.rank_out(#id, #comm); },
        (Base::Int, false, "out") if spec.kind == "INDEX" && function.ends_with("any") => {
            quote! { rec.index_out(#id); }
        }
        (Base::Int, false, "out") if is_address_output(function, spec) => {
            quote! { rec.address_out(#id); }
        }
        (Base::Int, false, "out") => quote! { rec.int_out(#id); },
        (Base::Int, true, _) if spec.kind == "COORDINATE" => {
            let len = len?;
            quote! { { let len = #len; rec.coords(#id, len, #comm); } }
        }
        (Base::Int, true, _) if ranky => {
            let len = len?;
            quote! { { let len = #len; rec.ranks(#id, len, #comm); } }
        }
        (Base::Int, true, _) => {
            let len = len?;
            quote! { { let len = #len; rec.ints(#id, len); } }
        }
        (Base::Handle("Comm"), false, "out") => {
            if function.contains("idup") {
                quote! { rec.idup_comm(#id, #comm); }
            } else if function.contains("get_parent") {
                quote! { rec.local_comm(#id); }
            } else {
                quote! { rec.new_comm(#id); }
            }
        }
        (Base::Handle("Request"), false, "out") => quote! { rec.new_request(#id, #comm); },
        (Base::Handle("Group"), false, "out") => quote! { rec.new_group(#id); },
        (Base::Handle("Win"), false, "out") => quote! { rec.new_window(#id); },
        (Base::Handle(kind), false, "out") => {
            let k = kind_ident(kind);
            quote! { rec.new_handle(#k, #id); }
        }
        (Base::Handle(kind), true, "out") => {
            let k = kind_ident(kind);
            let len = len?;
            quote! { { let len = #len; rec.new_handles(#k, #id, len); } }
        }
        (Base::Handle(kind), _, "inout") => {
            let k = kind_ident(kind);
            let len = if array {
                len?
            } else {
                quote! { 1usize }
            };
            quote! { { let len = #len; rec.handles_before(#k, #id, len, #array); } }
        }
        // One handle passed by pointer (`MPI_Cancel`'s request): the handle it points to.
        (Base::Handle(kind), false, "in") => {
            let k = kind_ident(kind);
            quote! {
                if #id.is_null() { rec.ignored(); } else { rec.handle(#k, crate::record::bits(*#id)); }
            }
        }
        (Base::Handle(kind), true, "in") => {
            let k = kind_ident(kind);
            let len = len?;
            quote! { { let len = #len; rec.handles(#k, #id, len); } }
        }
        (Base::Status, false, "out") => quote! { rec.status(#id, #comm); },
        (Base::Status, true, "out") => {
            let len = len?;
            quote! { { let len = #len; rec.statuses(#id, len, #comm); } }
        }
        _ => return None,
    })
}
