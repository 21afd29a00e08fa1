//! Generates the C-ABI wrappers: one `MPI_X` per `PMPI_X` that the installed `mpi.h` declares and
//! the installed library exports, with the exact parameter types bindgen read from `mpi.h`.

use crate::encoders::{Encoding, PollKey};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use std::collections::BTreeSet;
use syn::{FnArg, ForeignItem, Item, Pat, Signature};

/// A C function to wrap: its name without the `P` and its signature from `mpi.h`.
pub struct CFunction {
    /// `MPI_Send`.
    pub name: String,
    /// The `PMPI_Send` declaration as bindgen rendered it.
    pub signature: Signature,
}

/// The `PMPI_*` declarations in bindgen's output whose `MPI_*` and `PMPI_*` names the library
/// exports, sorted by name.
pub fn declared_and_exported(bindings: &str, exported: &BTreeSet<String>) -> Vec<CFunction> {
    let file = syn::parse_file(bindings).expect("bindgen output parses as Rust");
    let mut out = Vec::new();
    for item in file.items {
        let Item::ForeignMod(block) = item else {
            continue;
        };
        for foreign in block.items {
            let ForeignItem::Fn(f) = foreign else {
                continue;
            };
            let pmpi = f.sig.ident.to_string();
            let Some(name) = pmpi.strip_prefix('P').map(str::to_string) else {
                continue;
            };
            if exported.contains(&pmpi) && exported.contains(&name) {
                out.push(CFunction {
                    name,
                    signature: f.sig,
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// What a wrapper does besides recording, for the few calls that drive the runtime: code run
/// before and after the PMPI call (`MPI_Pcontrol`'s uses its argument `level`; the Fortran
/// wrapper replaces it), and whether the call's record must be finished before the
/// PMPI call (`MPI_Finalize` writes the trace and `MPI_Abort` the partial file, which must
/// include the call itself).
pub fn lifecycle_hooks(name: &str) -> (TokenStream, TokenStream, bool) {
    match name {
        "MPI_Init" | "MPI_Init_thread" => (
            quote! {},
            quote! { if call.is_outermost() { crate::runtime::after_init(); } },
            false,
        ),
        "MPI_Finalize" => (
            quote! { if call.is_outermost() { crate::runtime::before_finalize(); } },
            quote! {},
            true,
        ),
        "MPI_Abort" => (
            quote! { if call.is_outermost() { crate::runtime::before_abort(); } },
            quote! {},
            true,
        ),
        "MPI_Pcontrol" => (
            quote! {},
            quote! { crate::record::control::pcontrol(level as i64); },
            false,
        ),
        _ => (quote! {}, quote! {}, false),
    }
}

/// The record of a call finished before its PMPI call (see [`lifecycle_hooks`]), whose
/// inputs `prologue` encodes: `MPI_Finalize`'s MPI part is timed as the wait until every
/// rank called it (`crate::runtime::finalize_wait`), which is what its real MPI part mostly
/// does and which runs after the trace is written.
pub fn early_record(name: &str, prologue: &TokenStream) -> TokenStream {
    let wait = if name == "MPI_Finalize" {
        quote! { rec.before_pmpi(); crate::runtime::finalize_wait(); rec.after_pmpi(&0); }
    } else {
        quote! {}
    };
    quote! {
        if let Some(rec) = rec.as_mut() { #prologue #wait rec.finish(&0); }
        drop(rec);
    }
}

/// The PMPI call of a wrapper, or for sliced programs ([`conifer_spec::slicing`]) what
/// replaces it: a call the program asked to skip (`call.skip()`) that the spec lets the runtime
/// leave out goes to `crate::slice` instead (which may still decline: `None`), and calls that
/// complete, cancel or query requests go to `crate::slice::complete` once fake requests may
/// exist.
fn pmpi_call(function: &CFunction, pmpi: &Ident, args: &[&Pat]) -> TokenStream {
    use conifer_spec::slicing::{completes_requests, skip_class};
    let direct = quote! { crate::mpi::#pmpi(#(#args),*) };
    let name = function.name.as_str();
    if completes_requests(name) || matches!(name, "MPI_Cancel" | "MPI_Request_get_status") {
        let local = Ident::new(name, Span::call_site());
        return quote! {
            if crate::slice::active() { crate::slice::complete::#local(#(#args),*) } else { #direct }
        };
    }
    let Some(class) = skip_class(name) else {
        return direct;
    };
    let arg = |names: &[&str]| {
        names.iter().find_map(|n| {
            args.iter()
                .find(|a| quote!(#a).to_string() == *n)
                .map(|a| quote!(#a))
        })
    };
    let handler = skip_handler(class, &arg, &quote! { crate::slice }, &[]);
    match handler {
        Some(handler) => quote! {
            match if call.skip() { #handler } else { None } { Some(r) => r, None => #direct }
        },
        None => direct,
    }
}

/// The call of the slicing runtime that replaces a skipped call of class `class`, found in
/// module `runtime` (`crate::slice`, or `crate::slice::fortran` for Fortran calls, which also
/// pass `extra`: their `ierror`): `arg` finds the call's argument of one of the given names.
/// `None` when the call lacks an argument the handler needs (it then always executes).
pub fn skip_handler(
    class: conifer_spec::slicing::Skip,
    arg: &dyn Fn(&[&str]) -> Option<TokenStream>,
    runtime: &TokenStream,
    extra: &[TokenStream],
) -> Option<TokenStream> {
    use conifer_spec::slicing::Skip;
    let receive = (|| {
        Some([
            arg(&["source"])?,
            arg(&["recvtag", "tag"])?,
            arg(&["recvcount", "count"])?,
            arg(&["recvtype", "datatype"])?,
        ])
    })();
    match class {
        Skip::Send | Skip::Collective => Some(quote! { #runtime::skipped(#(#extra),*) }),
        Skip::Recv => arg(&["status"])
            .zip(receive)
            .map(|(status, [source, tag, count, ty])| {
                quote! { #runtime::skipped_receive(#status, #source, #tag, #count, #ty #(, #extra)*) }
            }),
        Skip::Nonblocking | Skip::NonblockingCollective => {
            arg(&["request"]).map(|request| match receive {
                Some([source, tag, count, ty]) if class == Skip::Nonblocking => quote! {
                    #runtime::skipped_receive_start(#request, #source, #tag, #count, #ty #(, #extra)*)
                },
                _ => quote! { #runtime::skipped_start(#request #(, #extra)*) },
            })
        }
    }
}

/// The wrapper of one C function, recorded under function id `id` with `encoding`; a poll
/// (`poll` keys it) repeating the thread's previous call is recorded as it.
pub fn wrapper(
    function: &CFunction,
    id: u16,
    encoding: &Encoding,
    poll: Option<&PollKey>,
    log: &crate::message_log::MessageLog,
) -> TokenStream {
    let mut sig = function.signature.clone();
    sig.ident = Ident::new(&function.name, Span::call_site());
    // C variadics cannot be defined in stable Rust; MPI_Pcontrol's extra arguments are
    // implementation-defined and ignored by every PMPI, so the wrapper takes the fixed ones.
    sig.variadic = None;
    sig.unsafety = Some(Default::default());
    sig.abi = Some(syn::parse_quote!(extern "C"));
    let pmpi = &function.signature.ident;
    let args: Vec<&Pat> = sig
        .inputs
        .iter()
        .map(|a| match a {
            FnArg::Typed(t) => &*t.pat,
            FnArg::Receiver(_) => unreachable!("foreign functions have no receiver"),
        })
        .collect();
    let (before, after, finish_early) = lifecycle_hooks(&function.name);
    let Encoding {
        prologue,
        epilogue,
        memo_key,
        ..
    } = encoding;
    // The inputs, copied from a recent call with the same raw arguments when they allow it.
    let inputs = match memo_key {
        Some(key) => quote! { rec.inputs(#id, &#key, |rec| { #prologue }); },
        None => quote! { #prologue },
    };
    // A poll skips its inputs and outputs when it repeats the previous call and again finds
    // nothing.
    let own = crate::own_status::own_status(&function.name, &args);
    let own_before = &own.before;
    let own_epilogue = &own.epilogue;
    let epilogue = &quote! { #own_epilogue #epilogue };
    let (inputs, epilogue_and_finish) = match poll {
        Some(key) => (
            key.skip_repeated_inputs(id, &inputs),
            PollKey::finish(epilogue, &quote! { ret }),
        ),
        None => (inputs, quote! { #epilogue rec.finish(&ret); }),
    };
    let record_early = early_record(&function.name, prologue);
    let crate::message_log::MessageLog {
        before: log_before,
        after: log_after,
        replay,
    } = log;
    let log_after = crate::message_log::when_logging(log_after, &quote! {});
    let body = if finish_early {
        quote! {
            #record_early
            #before
            let ret = crate::mpi::#pmpi(#(#args),*);
        }
    } else {
        let pmpi_call = pmpi_call(function, pmpi, &args);
        quote! {
            #own_before
            if let Some(rec) = rec.as_mut() { #inputs rec.before_pmpi(); }
            #before
            #log_before
            let ret = #pmpi_call;
            if let Some(rec) = rec.as_mut() { rec.after_pmpi(&ret); #epilogue_and_finish }
            drop(rec);
            #log_after
            // Hooks run once the record is finished and its lock released.
            #after
        }
    };
    // The replay's answer, out of the recording path's way.
    let inputs = &sig.inputs;
    let output = &sig.output;
    quote! {
        #[no_mangle]
        pub #sig {
            #[cold]
            #[inline(never)]
            #[allow(unused_variables)]
            unsafe fn replayed(#inputs) #output { #replay }
            static ANCHOR: crate::stack::Anchor = crate::stack::Anchor::new();
            let call = crate::thread::CallGuard::enter();
            if call.is_outermost() && crate::replay::active() { return replayed(#(#args),*); }
            #[allow(unused_mut)]
            let mut rec = if call.is_outermost() { crate::record::Call::start(&call, #id, &ANCHOR) } else { None };
            #body
            drop(call);
            ret
        }
    }
}
