//! Generates, for each wrapped C function, its part of PHANTOM-style replay: the code that
//! logs what MPI handed back to the program (`crate::msglog`, run with `--log-messages`) and
//! the code that, in a rank replayed alone, answers the call from that log instead
//! (`crate::replay`). Both come from one list of the call's inputs and outputs ([`Item`]), in
//! parameter order, so the replay reads exactly what the run wrote. Functions the replay runs
//! for real (`conifer_spec::message_log::runs_locally`) are not logged.

use crate::arg_types::{shape, Base, Shape};
use crate::encoders::{args, is_buffer, kind_ident, length, Arg};
use conifer_spec::message_log::{completion, runs_locally, Completion};
use conifer_spec::Function;
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use syn::Signature;

/// A wrapper's message-log code.
pub struct MessageLog {
    /// Runs before the PMPI call when logging (saves request arrays a completion empties).
    pub before: TokenStream,
    /// Runs after the PMPI call when logging (`ret` in scope).
    pub after: TokenStream,
    /// The whole call when replaying: returns the call's result.
    pub replay: TokenStream,
}

/// One input or output of a logged call.
enum Item {
    /// An integer input the replay compares (its name, its value).
    Input(String, TokenStream),
    /// A checksum of the data a send passes, compared too.
    Sent(TokenStream, TokenStream, TokenStream),
    /// Integers or other plain values written by MPI (pointer, element count).
    Raw(TokenStream, TokenStream),
    /// Statuses (pointer, count).
    Statuses(TokenStream, TokenStream),
    /// Handles (kind, pointer, count).
    Handles(TokenStream, TokenStream, TokenStream),
    /// A string MPI wrote.
    Text(TokenStream),
    /// A C communicator attribute query's value (value pointer, keyval, flag).
    Attribute(TokenStream, TokenStream, TokenStream),
    /// Data received into a buffer (buffer, datatype, layout, root-only guard).
    Received {
        buf: TokenStream,
        datatype: TokenStream,
        blocks: TokenStream,
        root_only: Option<TokenStream>,
    },
}

/// What a nonblocking call's request will deliver, logged at its completion.
struct Started {
    request: TokenStream,
    buf: TokenStream,
    datatype: TokenStream,
    blocks: TokenStream,
    point_to_point: bool,
    persistent: bool,
}

/// The logging code `after` of the outermost call of a thread while this rank logs, after
/// `setup`; nothing when there is nothing to log.
pub fn when_logging(after: &TokenStream, setup: &TokenStream) -> TokenStream {
    if after.is_empty() {
        return quote! {};
    }
    quote! { if call.is_outermost() && crate::msglog::logging() { #setup #after } }
}

/// The wrapper a message-log code goes into.
pub struct Wrapper<'a> {
    /// The function (C spelling).
    pub name: &'a str,
    /// Its C signature: the wrapper's parameters, or the Fortran wrapper's C view of them.
    pub sig: Option<&'a Signature>,
    /// Its entry in the spec.
    pub spec: Option<&'a Function>,
    /// Its wrapper id.
    pub id: u16,
    /// The call of the real procedure (its value is what the wrapper returns).
    pub real: TokenStream,
    /// A Fortran subroutine's `ierror` argument: the answer is written there, and the
    /// wrapper returns nothing.
    pub ierror: Option<Ident>,
    /// The hidden length of each CHARACTER parameter of a Fortran procedure.
    pub strings: &'a [(String, Ident)],
}

/// The message-log code of a wrapper.
pub fn code(w: &Wrapper) -> MessageLog {
    let name = w.name;
    let finalize = (name == "MPI_Finalize").then(|| quote! { crate::replay::at_finalize(); });
    // Intervals count from the return of `MPI_Init`: not the singleton start-up, nor a call
    // before it.
    let returned = if matches!(name, "MPI_Init" | "MPI_Init_thread") {
        quote! { crate::replay::initialized(); }
    } else {
        quote! { crate::replay::leave(); }
    };
    let real = &w.real;
    let real = quote! {
        #finalize
        crate::replay::enter();
        let ret = #real;
        #returned
        return ret;
    };
    let unsupported = |why: &str| MessageLog {
        before: quote! {},
        after: quote! {},
        replay: quote! { return crate::replay::unsupported(#name, #why); },
    };
    let Some(spec) = w.spec else {
        return unsupported("it is not in the MPI standard's function table");
    };
    if name == "MPI_Pcontrol" {
        // Profiling control only: nothing to log, nothing for the replay to do.
        // `MPI_SUCCESS` is 0 (C), or nothing (the Fortran subroutine).
        return MessageLog {
            before: quote! {},
            after: quote! {},
            replay: quote! {
                crate::replay::enter();
                crate::replay::leave();
                return Default::default();
            },
        };
    }
    if runs_locally(spec) {
        return MessageLog {
            before: quote! {},
            after: quote! {},
            replay: real,
        };
    }
    let Some(sig) = w.sig else {
        return unsupported("its arguments have no C equivalent Conifer reads");
    };
    let args = args(sig, Some(spec));
    if args.len() != spec.params.len() {
        return unsupported("its header declaration differs from the standard's");
    }
    match items(name, &args, w.strings, w.ierror.is_some()) {
        Ok((items, started)) => assemble(w, &args, &items, started.as_ref()),
        Err(why) => unsupported(&why),
    }
}

/// The parameter the standard names `name` (headers may name it otherwise: Open MPI's
/// `MPI_Mrecv` has `type` for `datatype`).
fn find<'a>(args: &'a [Arg], name: &str) -> Option<&'a Arg> {
    args.iter()
        .find(|a| a.spec.as_ref().map_or(a.ident == name, |s| s.name == name))
}

fn ident_of(args: &[Arg], names: &[&str]) -> Option<TokenStream> {
    names.iter().find_map(|n| find(args, n)).map(|a| {
        let id = &a.ident;
        quote! { #id }
    })
}

fn first_comm(args: &[Arg]) -> Option<TokenStream> {
    args.iter()
        .find(|a| matches!(shape(&a.ty), Shape::Value(Base::Handle("Comm"))))
        .map(|a| {
            let id = &a.ident;
            quote! { #id }
        })
}

/// The layout of a receive buffer as an expression over the call's arguments.
fn blocks(name: &str, args: &[Arg], buffer: &str) -> Result<(TokenStream, TokenStream), String> {
    let layout = quote! { crate::msglog::layout };
    let missing = || format!("the layout of its `{buffer}` is not known");
    let status = ident_of(args, &["status"]);
    if name.contains("neighbor") || find(args, "recvtypes").is_some() {
        return Err(missing());
    }
    if buffer == "buf" || buffer == "buffer" {
        let count = ident_of(args, &["count"]).ok_or_else(missing)?;
        let datatype = ident_of(args, &["datatype"]).ok_or_else(missing)?;
        let blocks = match status {
            Some(status) => quote! { #layout::received(#count, #status, #datatype) },
            None => quote! { #layout::one(#count) },
        };
        return Ok((datatype, blocks));
    }
    if buffer != "recvbuf" {
        return Err(missing());
    }
    let datatype = ident_of(args, &["recvtype", "datatype"]).ok_or_else(missing)?;
    let comm = first_comm(args);
    let blocks = if let Some(counts) = ident_of(args, &["recvcounts"]) {
        let comm = comm.ok_or_else(missing)?;
        match ident_of(args, &["displs", "rdispls"]) {
            Some(displs) => quote! { #layout::varied(#counts, #displs, #comm) },
            None => quote! { #layout::own_of(#counts, #comm) },
        }
    } else if let Some(count) = ident_of(args, &["recvcount"]) {
        let lower = name.to_ascii_lowercase();
        if (lower.contains("gather") || lower.contains("alltoall")) && !lower.contains("scatter") {
            let comm = comm.ok_or_else(missing)?;
            quote! { #layout::per_peer(#count, #comm) }
        } else if let Some(status) = status {
            quote! { #layout::received(#count, #status, #datatype) }
        } else {
            quote! { #layout::one(#count) }
        }
    } else {
        let count = ident_of(args, &["count"]).ok_or_else(missing)?;
        quote! { #layout::one(#count) }
    };
    Ok((datatype, blocks))
}

/// The inputs and outputs of a logged call, and the receive its request starts (if any).
fn items(
    name: &str,
    args: &[Arg],
    strings: &[(String, Ident)],
    fortran: bool,
) -> Result<(Vec<Item>, Option<Started>), String> {
    let creates_request = args.iter().any(|a| {
        a.spec
            .as_ref()
            .is_some_and(|s| s.dir == "out" && s.length.is_none())
            && matches!(
                shape(&a.ty),
                Shape::Pointer {
                    base: Base::Handle("Request"),
                    ..
                }
            )
    });
    let root_guard = match (find(args, "root"), first_comm(args)) {
        (Some(root), Some(comm)) => {
            let root = &root.ident;
            Some(quote! { crate::msglog::layout::is_root(#root, #comm) })
        }
        _ => None,
    };
    let mut items = Vec::new();
    let mut started = None;
    for arg in args {
        let spec = arg.spec.as_ref().expect("paired with the spec");
        let id = &arg.ident;
        let pname = spec.name.as_str();
        let len = || {
            if spec.length.is_none() {
                Ok(quote! { 1usize })
            } else {
                length(name, args, arg, true)
                    .ok_or_else(|| format!("the length of `{pname}` is not known"))
            }
        };
        match (shape(&arg.ty), spec.dir.as_str()) {
            (Shape::Value(Base::Int), _) => {
                items.push(Item::Input(pname.to_string(), quote! { #id as i64 }))
            }
            (Shape::Value(_), _) => {}
            (
                Shape::Pointer {
                    base: Base::Void, ..
                },
                "in",
            ) if is_buffer(arg) => {
                let pair = match pname {
                    "buf" => Some((["count"], ["datatype"])),
                    "sendbuf" => Some((["sendcount"], ["sendtype"])),
                    _ => None,
                };
                if let Some((count, datatype)) = pair.filter(|_| !spec.root_only) {
                    if let (Some(count), Some(datatype)) =
                        (ident_of(args, &count), ident_of(args, &datatype))
                    {
                        items.push(Item::Sent(quote! { #id }, count, datatype));
                    }
                }
            }
            (
                Shape::Pointer {
                    base: Base::Void, ..
                },
                _,
            ) if is_buffer(arg) => {
                let (datatype, blocks) = blocks(name, args, pname)?;
                if creates_request {
                    let request = args
                        .iter()
                        .find(|a| {
                            matches!(
                                shape(&a.ty),
                                Shape::Pointer {
                                    base: Base::Handle("Request"),
                                    ..
                                }
                            )
                        })
                        .map(|a| &a.ident)
                        .expect("a request parameter");
                    // Elsewhere than at the root, the request delivers nothing.
                    let blocks = match root_guard.as_ref().filter(|_| spec.root_only) {
                        Some(guard) => quote! { if #guard { #blocks } else { Vec::new() } },
                        None => blocks,
                    };
                    started = Some(Started {
                        request: quote! { #request },
                        buf: quote! { #id },
                        datatype,
                        blocks,
                        point_to_point: matches!(
                            name,
                            "MPI_Irecv" | "MPI_Imrecv" | "MPI_Recv_init" | "MPI_Precv_init"
                        ),
                        persistent: name.ends_with("_init"),
                    });
                } else {
                    let root_only = if spec.root_only {
                        root_guard.clone()
                    } else {
                        None
                    };
                    items.push(Item::Received {
                        buf: quote! { #id },
                        datatype,
                        blocks,
                        root_only,
                    });
                }
            }
            (Shape::Pointer { .. } | Shape::Other, "in") => {}
            (
                Shape::Pointer {
                    base: Base::Void, ..
                },
                "out",
            ) if matches!(name, "MPI_Comm_get_attr" | "MPI_Attr_get") => {
                // Fortran gets the value itself: an address-sized integer from
                // MPI_COMM_GET_ATTR, a default INTEGER from MPI_ATTR_GET.
                let keyval = ident_of(args, &["comm_keyval", "keyval"])
                    .ok_or_else(|| format!("its `{pname}` has no keyval"))?;
                let flag = ident_of(args, &["flag"])
                    .ok_or_else(|| format!("its `{pname}` has no flag"))?;
                items.push(match (fortran, name) {
                    (true, "MPI_Comm_get_attr") => {
                        Item::Raw(quote! { #id as *mut i64 }, quote! { 1usize })
                    }
                    (true, _) => Item::Raw(quote! { #id as *mut i32 }, quote! { 1usize }),
                    (false, _) => Item::Attribute(quote! { #id }, keyval, flag),
                });
            }
            (
                Shape::Pointer {
                    base: Base::Int, ..
                },
                _,
            ) => items.push(Item::Raw(quote! { #id }, len()?)),
            (
                Shape::Pointer {
                    base: Base::Status, ..
                },
                _,
            ) => items.push(Item::Statuses(quote! { #id }, len()?)),
            (
                Shape::Pointer {
                    base: Base::Handle(kind),
                    ..
                },
                _,
            ) => items.push(Item::Handles(kind_ident(kind), quote! { #id }, len()?)),
            (
                Shape::Pointer {
                    base: Base::Char,
                    mutable: true,
                },
                _,
            ) => items.push(match strings.iter().find(|(p, _)| p == pname) {
                Some((_, len)) => Item::Raw(quote! { #id as *mut u8 }, quote! { #len }),
                None => Item::Text(quote! { #id }),
            }),
            _ => return Err(format!("its output `{pname}` cannot be logged")),
        }
    }
    Ok((items, started))
}

/// The requests a completion call works on, and how it reports completions.
fn completion_args(name: &str, args: &[Arg]) -> Option<(Completion, TokenStream, TokenStream)> {
    let completion = completion(name)?;
    match completion {
        Completion::One | Completion::OneIfFlag => {
            let request = ident_of(args, &["request"])?;
            Some((completion, request, quote! { 1usize }))
        }
        _ => {
            let requests = ident_of(args, &["array_of_requests"])?;
            let count = ident_of(args, &["count", "incount"])?;
            Some((
                completion,
                requests,
                quote! { (#count as i64).max(0) as usize },
            ))
        }
    }
}

fn assemble(w: &Wrapper, args: &[Arg], items: &[Item], started: Option<&Started>) -> MessageLog {
    let (name, id) = (w.name, w.id);
    let msglog = quote! { crate::msglog };
    let null = quote! { ::std::ptr::null() };
    let pointer = |names: &[&str], ty: TokenStream| {
        ident_of(args, names).map_or(null.clone(), |id| quote! { #id as *const #ty })
    };
    let int = quote! { ::std::ffi::c_int };
    let completion = completion_args(name, args).map(|(completion, requests, count)| {
        let variant = Ident::new(&format!("{completion:?}"), proc_macro2::Span::call_site());
        let outcome = {
            let (flag, index, outcount, indices) = (
                pointer(&["flag"], int.clone()),
                pointer(&["index"], int.clone()),
                pointer(&["outcount"], int.clone()),
                pointer(&["array_of_indices"], int.clone()),
            );
            let statuses = ident_of(args, &["status", "array_of_statuses"])
                .map_or(null.clone(), |id| quote! { #id as *const _ });
            quote! {
                #msglog::completion::Outcome {
                    completion: conifer_spec::message_log::Completion::#variant,
                    count: #count, flag: #flag, index: #index, outcount: #outcount,
                    indices: #indices, statuses: #statuses,
                }
            }
        };
        (quote! { #msglog::saved(#requests, #count) }, outcome)
    });
    let freed = (name == "MPI_Request_free")
        .then(|| ident_of(args, &["request"]))
        .flatten()
        .map(|request| quote! { #msglog::saved(#request, 1usize) });
    let saved = completion
        .as_ref()
        .map(|(saved, _)| saved.clone())
        .or(freed.clone());
    let before = match &saved {
        Some(saved) => {
            quote! { let msglog_saved = if #msglog::logging() { #saved } else { Vec::new() }; }
        }
        None => quote! {},
    };

    let mut log_inputs = Vec::new();
    let mut replay_inputs = Vec::new();
    let mut log_items = Vec::new();
    let mut replay_items = Vec::new();
    for item in items {
        match item {
            Item::Input(pname, value) => {
                log_inputs.push(value.clone());
                replay_inputs.push(quote! { (#pname, #value) });
            }
            Item::Sent(buf, count, datatype) => {
                let sum = quote! { #msglog::sent_checksum(#buf, #count, #datatype) };
                log_inputs.push(sum.clone());
                replay_inputs.push(quote! { ("data sent", #sum) });
            }
            Item::Raw(ptr, len) => {
                log_items.push(quote! { e.raw(#ptr as *const _, #len); });
                replay_items.push(quote! { a.raw(#ptr); });
            }
            Item::Statuses(ptr, len) => {
                log_items.push(quote! { e.statuses(#ptr as *const _, #len); });
                replay_items.push(quote! { a.statuses(#ptr); });
            }
            Item::Handles(kind, ptr, len) => {
                log_items.push(quote! { e.handles(#kind, #ptr as *const _, #len); });
                replay_items.push(quote! { a.handles(#kind, #ptr); });
            }
            Item::Attribute(ptr, keyval, flag) => {
                log_items.push(quote! { e.attribute(#ptr as *const _, #keyval as ::std::ffi::c_int, #flag as *const _); });
                replay_items.push(quote! { a.attribute(#ptr as *mut _); });
            }
            Item::Text(ptr) => {
                log_items.push(quote! { e.string(#ptr as *const _); });
                replay_items.push(quote! { a.raw(#ptr); });
            }
            Item::Received {
                buf,
                datatype,
                blocks,
                root_only,
            } => {
                let received = quote! { e.received(#buf as *const _, #datatype, &#blocks); };
                log_items.push(match root_only {
                    Some(guard) => quote! { if #guard { #received } else { e.absent(); } },
                    None => received,
                });
                replay_items.push(quote! { a.received(#buf as *mut _, #datatype); });
            }
        }
    }
    let (log_start, replay_start) = match started {
        Some(s) => {
            let Started {
                request,
                buf,
                datatype,
                blocks,
                point_to_point,
                persistent,
            } = s;
            let pending = |blocks: TokenStream| {
                quote! {
                    #msglog::pending::start(#msglog::ProgramValue::to_bits(*#request), #msglog::pending::Pending {
                        buf: #buf as *mut _,
                        datatype: crate::msglog::layout::CDatatype::datatype(#datatype),
                        blocks: #blocks,
                        point_to_point: #point_to_point, persistent: #persistent,
                    });
                }
            };
            (pending(blocks.clone()), pending(quote! { Vec::new() }))
        }
        None => (quote! {}, quote! {}),
    };
    let (log_done, replay_done) = match (&completion, &freed) {
        (Some((_, outcome)), _) => (
            quote! { e.completed(&msglog_saved, &#outcome); },
            quote! { a.completed(&msglog_saved); },
        ),
        (None, Some(_)) => {
            let forget = quote! { for r in &msglog_saved { #msglog::pending::forget(*r); } };
            (forget.clone(), forget)
        }
        _ => (quote! {}, quote! {}),
    };
    let replay_saved = match &saved {
        Some(saved) => quote! { let msglog_saved = #saved; },
        None => quote! {},
    };
    let finish = match &w.ierror {
        Some(ierror) => quote! {
            let ret: ::std::ffi::c_int = a.finish();
            crate::replay::leave();
            crate::fortran::set_ierror(#ierror, ret);
            return;
        },
        None => quote! {
            let ret = a.finish();
            crate::replay::leave();
            return ret;
        },
    };
    MessageLog {
        before,
        after: quote! {
            if let Some(mut e) = #msglog::Entry::begin(#id, #msglog::ProgramValue::to_bits(ret), &[#(#log_inputs),*]) {
                #(#log_items)*
                #log_start
                #log_done
                e.commit();
            }
        },
        replay: quote! {
            crate::replay::enter();
            #replay_saved
            let mut a = crate::replay::Answer::begin(#id, &[#(#replay_inputs),*]);
            #(#replay_items)*
            #replay_start
            #replay_done
            #finish
        },
    }
}
