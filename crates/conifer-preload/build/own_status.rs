//! Generates the code that lets a C wrapper record statuses the program ignores (see the
//! runtime's `record::own_status`): receives and probes with a `source` and a tag substitute
//! the recorder's own status for `MPI_STATUS_IGNORE` when they match by wildcard, receive
//! requests posted so are marked, and the calls completing such a request substitute the
//! recorder's statuses.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Pat;

/// What a wrapper adds for statuses the program ignores: code before the PMPI call (after
/// the record is started; it may shadow the status argument), and code at the start of the
/// record's epilogue.
#[derive(Default)]
pub struct OwnStatus {
    /// Before the PMPI call.
    pub before: TokenStream,
    /// At the start of the epilogue, with `rec` the started record.
    pub epilogue: TokenStream,
}

/// Functions completing requests: their request argument and the argument giving how many
/// (`None`: one).
const COMPLETES: &[(&str, &str, Option<&str>)] = &[
    ("MPI_Wait", "request", None),
    ("MPI_Test", "request", None),
    ("MPI_Waitany", "array_of_requests", Some("count")),
    ("MPI_Testany", "array_of_requests", Some("count")),
    ("MPI_Waitall", "array_of_requests", Some("count")),
    ("MPI_Testall", "array_of_requests", Some("count")),
    ("MPI_Waitsome", "array_of_requests", Some("incount")),
    ("MPI_Testsome", "array_of_requests", Some("incount")),
];

/// The code `name` (a C function with arguments `args`) needs.
pub fn own_status(name: &str, args: &[&Pat]) -> OwnStatus {
    let arg = |n: &str| args.iter().any(|a| quote!(#a).to_string() == n);
    let runtime = quote! { crate::record::own_status };
    let room = quote! {
        #[allow(unused_mut)]
        let mut conifer_own = #runtime::OwnStatuses::default();
    };
    if let Some(tag) = ["tag", "recvtag"].into_iter().find(|t| arg(t)) {
        if !arg("source") {
            return OwnStatus::default();
        }
        let tag = syn::Ident::new(tag, proc_macro2::Span::call_site());
        let wildcard = quote! { let conifer_wildcard = #runtime::is_wildcard(source, #tag); };
        if arg("status") {
            return OwnStatus {
                before: quote! {
                    #wildcard
                    #room
                    let status = conifer_own.one(status, rec.is_some() && conifer_wildcard);
                },
                epilogue: quote! {},
            };
        }
        if arg("request") {
            return OwnStatus {
                before: wildcard,
                epilogue: quote! { if conifer_wildcard { rec.mark_wildcard(); } },
            };
        }
        return OwnStatus::default();
    }
    let Some(&(_, requests, count)) = COMPLETES.iter().find(|(n, ..)| *n == name) else {
        return OwnStatus::default();
    };
    let ident = |n: &str| syn::Ident::new(n, proc_macro2::Span::call_site());
    let requests = ident(requests);
    let count = count.map_or(quote! { 1 }, |c| {
        let c = ident(c);
        quote! { #c }
    });
    let wanted = quote! {
        let conifer_wanted = match rec.as_mut() {
            Some(rec) => rec.completes_wildcard(#requests as *const _, #count),
            None => false,
        };
    };
    if arg("status") {
        return OwnStatus {
            before: quote! {
                #wanted
                #room
                let status = conifer_own.one(status, conifer_wanted);
            },
            epilogue: quote! {},
        };
    }
    if arg("array_of_statuses") {
        return OwnStatus {
            before: quote! {
                #wanted
                #room
                let array_of_statuses = conifer_own.many(array_of_statuses, #count, conifer_wanted);
            },
            epilogue: quote! {},
        };
    }
    OwnStatus::default()
}
