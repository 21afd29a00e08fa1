//! Generates the Fortran (mpif.h / `use mpi`) wrappers in the four manglings compilers use
//! (`mpi_send_`, `mpi_send__`, `mpi_send`, `MPI_SEND`).
//!
//! Every Fortran argument is passed by reference, and gfortran appends one hidden length
//! argument per CHARACTER argument. A wrapper records the call and forwards the very same
//! arguments to the MPI library's own Fortran profiling entry (`pmpi_send_`), looked up once
//! with `dlsym`: the MPI library keeps doing the handle conversion, the sentinel handling
//! (`MPI_IN_PLACE`, `MPI_STATUS_IGNORE`, …) and `ierror`, so the call behaves exactly as untraced.

use conifer_spec::Function;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeSet;

/// The four symbol manglings of one Fortran procedure stem (`mpi_send`).
pub fn manglings(stem: &str) -> [String; 4] {
    [
        format!("{stem}_"),
        format!("{stem}__"),
        stem.to_string(),
        stem.to_ascii_uppercase(),
    ]
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

/// The four wrappers of one Fortran procedure, recorded under function id `id`.
pub fn wrappers(function: &Function, id: u16) -> TokenStream {
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
    let ret = return_type(function);
    let stem = function.fortran_stem();
    let profiling_names: Vec<String> = manglings(&format!("p{stem}"))
        .iter()
        .map(|m| format!("{m}\0"))
        .collect();
    let entry = format_ident!("REAL_{}", stem.to_ascii_uppercase());
    let inner = format_ident!("{}_traced", stem);
    let (before, after, finish_early) = super::c_wrappers::lifecycle_hooks(&function.name);
    // Subroutines return nothing; the few Fortran functions (MPI_WTIME, …) pass a value back.
    let (bind, result) = if ret.is_empty() {
        (quote! {}, quote! {})
    } else {
        (quote! { let ret = }, quote! { ret })
    };
    // Arguments are not decoded yet (recorded as the call alone); `ierror`, the last
    // argument when present, is the recorded result.
    let ierror = match function.fortran_params.last() {
        Some(p) if p.name == "ierror" => {
            let last = format_ident!("a{}", function.fortran_params.len() - 1);
            quote! { crate::record::read_ierror(#last) }
        }
        _ => quote! { 0 },
    };
    let (early, late) = if finish_early {
        (
            quote! { if let Some(rec) = rec.take() { rec.finish(&0); } },
            quote! {},
        )
    } else {
        (
            quote! { if let Some(rec) = rec.as_mut() { rec.before_pmpi(); } },
            quote! { if let Some(mut rec) = rec { rec.after_pmpi(); rec.finish(&#ierror); } },
        )
    };
    let outer: Vec<TokenStream> = manglings(&stem)
        .iter()
        .map(|m| {
            let ident = Ident::new(m, Span::call_site());
            quote! {
                #[no_mangle]
                pub unsafe extern "C" fn #ident(#(#params: #types),*) #ret {
                    #inner(#(#params),*)
                }
            }
        })
        .collect();
    quote! {
        static #entry: crate::fortran::ProfilingEntry =
            crate::fortran::ProfilingEntry::new([#(#profiling_names),*]);

        #[inline(always)]
        unsafe fn #inner(#(#params: #types),*) #ret {
            let call = crate::runtime::CallGuard::enter(#id);
            let mut rec = if call.is_outermost() { crate::record::Call::start(&call, #id) } else { None };
            #early
            #before
            let real: unsafe extern "C" fn(#(#types),*) #ret = ::std::mem::transmute(#entry.get());
            #bind real(#(#params),*);
            #late
            #after
            drop(call);
            #result
        }

        #(#outer)*
    }
}
