//! Generates the Fortran (mpif.h / `use mpi`) wrappers in the four manglings compilers use
//! (`mpi_send_`, `mpi_send__`, `mpi_send`, `MPI_SEND`).
//!
//! Every Fortran argument is passed by reference, and gfortran appends one hidden length
//! argument per CHARACTER argument. A wrapper records the call and forwards the very same
//! arguments to the MPI library's own Fortran profiling entry (`pmpi_send_`), looked up once
//! with `dlsym`: the MPI library keeps doing the handle conversion, the sentinel handling
//! (`MPI_IN_PLACE`, `MPI_STATUS_IGNORE`, …) and `ierror`, so the call behaves exactly as untraced.

use crate::arg_types::{shape, Base, Shape};
use crate::encoders;
use conifer_spec::Function;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeSet;
use syn::{FnArg, Pat, Signature};

/// The four symbol manglings of one Fortran procedure stem (`mpi_send`).
pub fn manglings(stem: &str) -> [String; 4] {
    [
        format!("{stem}_"),
        format!("{stem}__"),
        stem.to_string(),
        stem.to_ascii_uppercase(),
    ]
}

/// Open MPI's `mpi_f08` procedures (libmpi_usempif08) do not call the `mpif.h` entry points
/// but their implementation's global name, `ompi_<name>_f` (`mpi_send_` is an alias of
/// `ompi_send_f`), with the same arguments: handles are the derived types' integer values,
/// `ierror` always given. Defining that name too records `use mpi_f08` programs. MPICH's
/// `mpi_f08` procedures call its internals directly and are not wrapped.
fn f08_entry(stem: &str, exported: &BTreeSet<String>) -> Option<String> {
    let name = format!("o{stem}_f");
    exported.contains(&name).then_some(name)
}

/// One set of exported symbols sharing a traced body: the symbols, the real procedure's
/// candidate names, and whether choice buffers arrive as array descriptors.
struct Binding {
    /// Suffix of the traced body's name (`mpi_send_traced`, `mpi_send_f08_traced`).
    tag: &'static str,
    symbols: Vec<String>,
    real: [String; 4],
    descriptors: bool,
}

/// MPICH's `mpi_f08` specific procedures: `mpi_send_f08ts_` (its choice buffers are
/// assumed-rank, passed as array descriptors) or `mpi_comm_rank_f08_`, with the same
/// arguments as the `mpif.h` procedure otherwise (handles are the derived types' integers;
/// an absent optional `ierror` is a null pointer), and profiling twins `pmpir_send_f08ts_`.
fn mpich_f08_binding(stem: &str, exported: &BTreeSet<String>) -> Option<Binding> {
    ["_f08ts_", "_f08_"].into_iter().find_map(|suffix| {
        let name = format!("{stem}{suffix}");
        let real = format!("pmpir{}{suffix}", stem.strip_prefix("mpi")?);
        (exported.contains(&name) && exported.contains(&real)).then(|| Binding {
            tag: "f08",
            symbols: vec![name],
            real: std::array::from_fn(|_| format!("{real}\0")),
            descriptors: suffix == "_f08ts_",
        })
    })
}

/// The spec's Fortran procedures whose entry points the installed Fortran MPI library exports.
pub fn exported<'a>(spec: &'a [Function], exported: &BTreeSet<String>) -> Vec<&'a Function> {
    spec.iter()
        .filter(|f| f.fortran)
        .filter(|f| {
            manglings(&f.fortran_stem())
                .iter()
                .any(|m| exported.contains(m))
        })
        .collect()
}

fn return_type(function: &Function) -> TokenStream {
    match function.return_kind.as_str() {
        "WALL_TIME" | "TICK_RESOLUTION" => quote! { -> f64 },
        "DISPLACEMENT" | "LOCATION_SMALL" => quote! { -> isize },
        _ => quote! {},
    }
}

/// The Fortran handle type standing for a C handle kind.
fn fortran_handle(kind: &str) -> Option<TokenStream> {
    let name = match kind {
        "Comm" => "FComm",
        "Datatype" => "FDatatype",
        "Op" => "FOp",
        "Group" => "FGroup",
        "Info" => "FInfo",
        "Errhandler" => "FErrhandler",
        "Request" => "FRequest",
        "Win" => "FWin",
        "File" => "FFile",
        "Message" => "FMessage",
        _ => return None,
    };
    let ident = Ident::new(name, Span::call_site());
    Some(quote! { crate::fortran::handles::#ident })
}

/// Locals named and typed like the C binding's parameters, made from the Fortran arguments
/// (every Fortran argument is a pointer), so the C encoders record a Fortran call exactly as
/// the equivalent C call; and the hidden length of each CHARACTER parameter. `None` when some
/// C parameter has no Fortran counterpart the encoders could read.
fn c_view(
    function: &Function,
    c_sig: &Signature,
    descriptors: bool,
) -> Option<(TokenStream, Vec<(String, Ident)>)> {
    // C parameters pair with the standard's by position (header names differ: `old_comm`,
    // `type_`), and the standard's with the Fortran ones by name.
    if function.params.len() != c_sig.inputs.len() {
        return None;
    }
    let mut locals = Vec::new();
    let mut strings = Vec::new();
    let mut hidden = std::collections::HashMap::new();
    for (i, p) in function
        .fortran_params
        .iter()
        .filter(|p| p.string)
        .enumerate()
    {
        hidden.insert(p.name.clone(), format_ident!("len{i}"));
    }
    for (input, spec) in c_sig.inputs.iter().zip(&function.params) {
        let FnArg::Typed(typed) = input else {
            return None;
        };
        let Pat::Ident(pat) = &*typed.pat else {
            return None;
        };
        let local = &pat.ident;
        let ty = &typed.ty;
        let shape = shape(ty);
        let interpreted = !matches!(
            shape,
            Shape::Value(Base::Other | Base::Void | Base::Char | Base::Status) | Shape::Other
        );
        let Some(index) = function
            .fortran_params
            .iter()
            .position(|p| p.name == spec.name)
        else {
            if interpreted {
                return None;
            }
            continue;
        };
        let a = format_ident!("a{index}");
        let wide = matches!(
            spec.c_base_type.as_deref(),
            Some("MPI_Aint" | "MPI_Offset" | "MPI_Count")
        );
        let code = match shape {
            Shape::Value(Base::Int) if wide => quote! { let #local = *(#a as *const i64) as #ty; },
            Shape::Value(Base::Int) => quote! { let #local = *(#a as *const i32) as #ty; },
            Shape::Value(Base::Handle(kind)) => {
                let f = fortran_handle(kind)?;
                quote! { let #local = #f(*(#a as *const crate::fortran::FortranInt)); }
            }
            Shape::Pointer {
                base: Base::Handle(kind),
                ..
            } => {
                let f = fortran_handle(kind)?;
                quote! { let #local = #a as *mut #f; }
            }
            Shape::Pointer {
                base: Base::Status, ..
            } => {
                quote! { let #local = #a as *mut crate::fortran::handles::FStatus; }
            }
            Shape::Pointer {
                base: Base::Char, ..
            } => {
                if let Some(len) = hidden.get(&spec.name) {
                    strings.push((spec.name.clone(), len.clone()));
                }
                quote! { let #local = #a as #ty; }
            }
            Shape::Pointer {
                base: Base::Void, ..
            } if spec.kind == "BUFFER" && descriptors => {
                // An array descriptor, whose first member is the data's address.
                quote! { let #local = crate::fortran::c_buffer(*(#a as *const *mut ::std::ffi::c_void)) as #ty; }
            }
            Shape::Pointer {
                base: Base::Void, ..
            } if spec.kind == "BUFFER" => {
                quote! { let #local = crate::fortran::c_buffer(#a) as #ty; }
            }
            Shape::Pointer { .. } => quote! { let #local = #a as #ty; },
            _ => continue,
        };
        locals.push(code);
    }
    Some((quote! { #(#locals)* }, strings))
}

/// The wrappers of one Fortran procedure — the four `mpif.h` manglings (and Open MPI's
/// `ompi_<name>_f`), and MPICH's `mpi_f08` procedure when it has one — recorded under function
/// id `id` with the encoders of the C function `c_sig` when the C binding exists; returns the
/// recorded slots.
pub fn wrappers(
    function: &Function,
    id: u16,
    c_sig: Option<&Signature>,
    exported: &BTreeSet<String>,
) -> (TokenStream, Vec<String>) {
    let mut params: Vec<Ident> = Vec::new();
    let mut types: Vec<TokenStream> = Vec::new();
    for (i, _) in function.fortran_params.iter().enumerate() {
        params.push(format_ident!("a{i}"));
        types.push(quote! { *mut ::std::ffi::c_void });
    }
    for (i, _) in function
        .fortran_params
        .iter()
        .filter(|p| p.string)
        .enumerate()
    {
        params.push(format_ident!("len{i}"));
        types.push(quote! { usize });
    }
    let stem = function.fortran_stem();
    let mpif = Binding {
        tag: "",
        symbols: manglings(&stem)
            .into_iter()
            .chain(f08_entry(&stem, exported))
            .collect(),
        real: manglings(&format!("p{stem}")).map(|m| format!("{m}\0")),
        descriptors: false,
    };
    let mut code = Vec::new();
    let mut slots = Vec::new();
    for binding in std::iter::once(mpif).chain(mpich_f08_binding(&stem, exported)) {
        let (body, recorded) = binding_code(function, id, c_sig, &params, &types, &binding);
        code.push(body);
        slots = recorded;
    }
    (quote! { #(#code)* }, slots)
}

/// The traced body and exported symbols of one [`Binding`] of a Fortran procedure.
fn binding_code(
    function: &Function,
    id: u16,
    c_sig: Option<&Signature>,
    params: &[Ident],
    types: &[TokenStream],
    binding: &Binding,
) -> (TokenStream, Vec<String>) {
    let ret = return_type(function);
    let stem = function.fortran_stem();
    let profiling_names = &binding.real;
    let (entry, inner) = match binding.tag {
        "" => (
            format_ident!("REAL_{}", stem.to_ascii_uppercase()),
            format_ident!("{}_traced", stem),
        ),
        tag => (
            format_ident!(
                "REAL_{}_{}",
                stem.to_ascii_uppercase(),
                tag.to_ascii_uppercase()
            ),
            format_ident!("{}_{}_traced", stem, tag),
        ),
    };
    let (before, mut after, finish_early) = super::c_wrappers::lifecycle_hooks(&function.name);
    // Subroutines return nothing; the few Fortran functions (MPI_WTIME, …) pass a value back.
    let (bind, result) = if ret.is_empty() {
        (quote! {}, quote! {})
    } else {
        (quote! { let ret = }, quote! { ret })
    };
    let view = c_sig.and_then(|sig| Some((sig, c_view(function, sig, binding.descriptors)?)));
    // A poll keyed like its C binding, over the C view's locals (see `record/poll_repeat.rs`).
    let poll = view
        .as_ref()
        .and_then(|(sig, _)| encoders::poll_key(&function.name, sig, Some(function)));
    let ierror_arg = match function.fortran_params.last() {
        Some(p) if p.name == "ierror" => {
            Some(format_ident!("a{}", function.fortran_params.len() - 1))
        }
        _ => None,
    };
    let no_strings = Vec::new();
    let log = crate::message_log::code(&crate::message_log::Wrapper {
        name: &function.name,
        sig: view.as_ref().map(|(sig, _)| *sig),
        spec: Some(function),
        id,
        real: quote! { real(#(#params),*) },
        ierror: ierror_arg.clone().filter(|_| ret.is_empty()),
        strings: view
            .as_ref()
            .map_or(&no_strings, |(_, (_, strings))| strings),
    });
    let (locals, prologue, epilogue, slots) = match view {
        Some((sig, (locals, strings))) => {
            let e = encoders::encoding(&function.name, sig, Some(function), &strings);
            (locals, e.prologue, e.epilogue, e.slots)
        }
        // C's MPI_Pcontrol is variadic, so there is no C view of the Fortran one: its level is
        // read here.
        None if function.name == "MPI_Pcontrol" => {
            let level = quote! { i64::from(*(a0 as *const crate::fortran::FortranInt)) };
            after = quote! { crate::record::control::pcontrol(#level); };
            (
                quote! {},
                quote! { rec.int(#level); },
                quote! {},
                vec!["level".to_string()],
            )
        }
        None => (quote! {}, quote! {}, quote! {}, Vec::new()),
    };
    // `ierror`, the last argument when present, is the recorded result.
    let ierror = match function.fortran_params.last() {
        Some(p) if p.name == "ierror" => {
            let last = format_ident!("a{}", function.fortran_params.len() - 1);
            quote! { crate::record::read_ierror(#last) }
        }
        _ => quote! { 0 },
    };
    let (early, late) = match (finish_early, poll) {
        (true, _) => (
            super::c_wrappers::early_record(&function.name, &prologue),
            quote! {},
        ),
        // A poll skips its inputs and outputs when it repeats the previous call and again
        // finds nothing, as in the C wrappers.
        (false, Some(key)) => {
            let inputs = key.skip_repeated_inputs(id, &prologue);
            let finish = encoders::PollKey::finish(&epilogue, &quote! { ierror });
            (
                quote! { if let Some(rec) = rec.as_mut() { #inputs rec.before_pmpi(); } },
                quote! {
                    if let Some(rec) = rec.as_mut() { let ierror = #ierror; rec.after_pmpi(&ierror); #finish }
                    drop(rec);
                },
            )
        }
        (false, None) => (
            quote! { if let Some(rec) = rec.as_mut() { #prologue rec.before_pmpi(); } },
            quote! { if let Some(rec) = rec.as_mut() { rec.after_pmpi(&#ierror); #epilogue rec.finish(&#ierror); } drop(rec); },
        ),
    };
    let crate::message_log::MessageLog {
        before: log_before,
        after: log_after,
        replay: log_replay,
    } = log;
    // The logged result of a subroutine is its `ierror`.
    let log_ret = if ret.is_empty() {
        quote! { let ret: ::std::ffi::c_int = #ierror; }
    } else {
        quote! {}
    };
    let log_after = crate::message_log::when_logging(&log_after, &log_ret);
    let direct = quote! { #bind real(#(#params),*); };
    let forward = match binding.tag {
        "" => sliced_forward(function, direct),
        _ => direct,
    };
    let outer: Vec<TokenStream> = binding
        .symbols
        .iter()
        .map(|m| {
            let ident = Ident::new(m, Span::call_site());
            quote! {
                #[no_mangle]
                pub unsafe extern "C" fn #ident(#(#params: #types),*) #ret {
                    static ANCHOR: crate::stack::Anchor = crate::stack::Anchor::new();
                    #inner(#(#params,)* &ANCHOR)
                }
            }
        })
        .collect();
    let code = quote! {
        static #entry: crate::fortran::ProfilingEntry =
            crate::fortran::ProfilingEntry::new([#(#profiling_names),*]);

        #[inline(always)]
        #[allow(unused_variables, unused_mut)]
        unsafe fn #inner(#(#params: #types,)* anchor: &crate::stack::Anchor) #ret {
            #locals
            let call = crate::thread::CallGuard::enter();
            if call.is_outermost() && crate::replay::active() {
                let real: unsafe extern "C" fn(#(#types),*) #ret = ::std::mem::transmute(#entry.get());
                #log_replay
            }
            let mut rec = if call.is_outermost() { crate::record::Call::start(&call, #id, anchor) } else { None };
            #early
            #before
            let real: unsafe extern "C" fn(#(#types),*) #ret = ::std::mem::transmute(#entry.get());
            #log_before
            #forward
            #late
            #log_after
            #after
            drop(call);
            #result
        }

        #(#outer)*
    };
    (code, slots)
}

/// The forwarding of an `mpif.h` wrapper in a sliced program ([`conifer_spec::slicing`]): a
/// call the program asked to skip that the spec lets the runtime leave out goes to
/// `crate::slice::fortran` instead of the real procedure (which may still decline: false), and
/// calls that complete, cancel or query requests go there once fake requests may exist.
/// MPICH's `mpi_f08` procedures always forward (their statuses are not `INTEGER` arrays); a
/// skip asked of them is consumed and the call executes.
fn sliced_forward(function: &Function, direct: TokenStream) -> TokenStream {
    use conifer_spec::slicing::{completes_requests, skip_class};
    let name = function.name.as_str();
    let params = &function.fortran_params;
    let arg = |names: &[&str]| {
        names.iter().find_map(|n| {
            params.iter().position(|p| p.name == *n).map(|i| {
                let a = format_ident!("a{i}");
                quote! { #a }
            })
        })
    };
    let ierror = arg(&["ierror"]).unwrap_or(quote! { ::std::ptr::null_mut() });
    if completes_requests(name) || matches!(name, "MPI_Cancel" | "MPI_Request_get_status") {
        let handler = format_ident!("{}", name.trim_start_matches("MPI_").to_ascii_lowercase());
        let all: Vec<Ident> = (0..params.len()).map(|i| format_ident!("a{i}")).collect();
        return quote! {
            if crate::slice::active() { crate::slice::fortran::#handler(#(#all),*); } else { #direct }
        };
    }
    let Some(class) = skip_class(name) else {
        return direct;
    };
    let runtime = quote! { crate::slice::fortran };
    let handler = super::c_wrappers::skip_handler(class, &arg, &runtime, &[ierror]);
    match handler {
        Some(handler) => quote! { if !(call.skip() && #handler) { #direct } },
        None => direct,
    }
}
