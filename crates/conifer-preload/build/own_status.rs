//! Generates the code that lets a C wrapper record statuses the program ignores (see the
//! runtime's `record::own_status`): receives and probes with a `source` and a tag substitute
//! the recorder's own status for `MPI_STATUS_IGNORE` when they match by wildcard, receive
//! requests posted so are marked, and the calls completing requests substitute the recorder's
//! statuses while such a request is live.

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

/// Functions completing requests with one status, and with an array of them (and the argument
/// giving its length).
const COMPLETES_ONE: &[&str] = &["MPI_Wait", "MPI_Test", "MPI_Waitany", "MPI_Testany"];
const COMPLETES_MANY: &[(&str, &str)] = &[
    ("MPI_Waitall", "count"),
    ("MPI_Testall", "count"),
    ("MPI_Waitsome", "incount"),
    ("MPI_Testsome", "incount"),
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
    let wanted = quote! { rec.is_some() && #runtime::wildcard_requests_live() };
    if COMPLETES_ONE.contains(&name) && arg("status") {
        return OwnStatus {
            before: quote! {
                #room
                let status = conifer_own.one(status, #wanted);
            },
            epilogue: quote! {},
        };
    }
    if let Some((_, len)) = COMPLETES_MANY.iter().find(|(n, _)| *n == name) {
        if arg("array_of_statuses") {
            let len = syn::Ident::new(len, proc_macro2::Span::call_site());
            return OwnStatus {
                before: quote! {
                    #room
                    let array_of_statuses = conifer_own.many(array_of_statuses, #len, #wanted);
                },
                epilogue: quote! {},
            };
        }
    }
    OwnStatus::default()
}
