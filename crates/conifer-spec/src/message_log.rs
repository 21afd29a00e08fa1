//! What PHANTOM-style replay (`conifer run --log-messages`, `conifer replay`) needs to know
//! about MPI functions: which ones a rank replayed alone runs for real (they only touch local
//! objects: datatypes, operations, info objects, the library's own state), and which ones
//! it answers from the message log recorded in the original run (everything that talks to
//! other ranks or names a communicator, group, request, window, file or message).

use crate::Function;

/// Parameter kinds naming objects that exist only with the other ranks: a function taking
/// one is answered from the log.
const SHARED_KINDS: &[&str] = &[
    "COMMUNICATOR",
    "GROUP",
    "REQUEST",
    "WINDOW",
    "FILE",
    "MESSAGE",
    "SESSION",
];

/// Name prefixes of functions on local objects only, run for real during replay (datatype
/// construction and queries, packing, reduction operations, info objects, status queries).
const LOCAL_PREFIXES: &[&str] = &[
    "MPI_Type_",
    "MPI_Pack",
    "MPI_Unpack",
    "MPI_Op_",
    "MPI_Info_",
    "MPI_Get_count",
    "MPI_Get_elements",
    "MPI_Status_",
    "MPI_Get_address",
    "MPI_Address",
    "MPI_Reduce_local",
    "MPI_Alloc_mem",
    "MPI_Free_mem",
    "MPI_Error_",
    "MPI_Get_version",
];

/// The process's own lifecycle: run for real, the rank alone being a singleton MPI process.
const LIFECYCLE: &[&str] = &[
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Finalize",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Abort",
    "MPI_Query_thread",
    "MPI_Is_thread_main",
];

/// True when a rank replayed alone runs `function` for real; false when its results come
/// from the message log. Packing functions take a communicator only to pick a data
/// representation, and run for real.
pub fn runs_locally(function: &Function) -> bool {
    let name = function.name.as_str();
    if LIFECYCLE.contains(&name) {
        return true;
    }
    let packing = name.starts_with("MPI_Pack") || name.starts_with("MPI_Unpack");
    let local_prefix = LOCAL_PREFIXES.iter().any(|p| name.starts_with(p));
    let shared = function
        .params
        .iter()
        .any(|p| SHARED_KINDS.contains(&p.kind.as_str()));
    local_prefix && (packing || !shared)
}

/// How a completion call reports which of its requests completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// `MPI_Wait`: its one request.
    One,
    /// `MPI_Test`: its one request, when `flag` is set.
    OneIfFlag,
    /// `MPI_Waitall`: every request.
    All,
    /// `MPI_Testall`: every request, when `flag` is set.
    AllIfFlag,
    /// `MPI_Waitany`, `MPI_Testany`: the request at `index` (unless `MPI_UNDEFINED`).
    Any,
    /// `MPI_Waitsome`, `MPI_Testsome`: the requests at `array_of_indices[..outcount]`.
    Some,
}

/// How `name` reports the requests it completed; `None` for every other function.
pub fn completion(name: &str) -> Option<Completion> {
    Some(match name {
        "MPI_Wait" => Completion::One,
        "MPI_Test" => Completion::OneIfFlag,
        "MPI_Waitall" => Completion::All,
        "MPI_Testall" => Completion::AllIfFlag,
        "MPI_Waitany" | "MPI_Testany" => Completion::Any,
        "MPI_Waitsome" | "MPI_Testsome" => Completion::Some,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str) -> Function {
        crate::functions()
            .into_iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{name} is in the table"))
    }

    #[test]
    fn local_and_logged_functions() {
        for name in [
            "MPI_Type_vector",
            "MPI_Type_commit",
            "MPI_Pack",
            "MPI_Unpack",
            "MPI_Get_count",
            "MPI_Op_create",
            "MPI_Init",
            "MPI_Finalize",
        ] {
            assert!(runs_locally(&function(name)), "{name} runs locally");
        }
        for name in [
            "MPI_Send",
            "MPI_Irecv",
            "MPI_Wait",
            "MPI_Comm_rank",
            "MPI_Comm_split",
            "MPI_Allreduce",
            "MPI_Wtime",
            "MPI_Type_create_keyval",
            "MPI_Group_incl",
            "MPI_Get_processor_name",
        ] {
            let local = runs_locally(&function(name));
            // Type keyvals are local objects too; the rest talk to other ranks or name
            // shared objects, or (Wtime, the processor name) must answer as in the run.
            assert_eq!(local, name == "MPI_Type_create_keyval", "{name}");
        }
    }

    #[test]
    fn completions() {
        assert_eq!(completion("MPI_Waitsome"), Some(Completion::Some));
        assert_eq!(completion("MPI_Testany"), Some(Completion::Any));
        assert_eq!(completion("MPI_Send"), None);
    }
}
