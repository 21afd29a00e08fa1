//! What FACT-style slicing (`conifer cc --slice`) needs to know about MPI functions: which
//! arguments are communication arguments (the slicing criterion), which are message buffers,
//! which are outputs, and which functions the runtime may leave unexecuted when the static
//! pass finds no live value depending on them.

use crate::{Function, Param};

/// How the runtime treats a call the static pass left unmarked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A blocking point-to-point send: not executed.
    Send,
    /// A blocking point-to-point receive or probe: not executed, its status made up from
    /// its own arguments (source, tag).
    Recv,
    /// A nonblocking point-to-point operation: not executed, its request a local fake that
    /// completion calls complete at once.
    Nonblocking,
    /// A blocking collective that creates no MPI object: not executed.
    Collective,
    /// A nonblocking collective: not executed, its request a local fake.
    NonblockingCollective,
}

impl Skip {
    /// Point-to-point (matched across call sites: one marked receive marks every one).
    pub fn point_to_point(self) -> bool {
        matches!(self, Skip::Send | Skip::Recv | Skip::Nonblocking)
    }
}

/// The class of `name` (C spelling) when the runtime can leave it unexecuted; `None` for every
/// function that always executes (initialisation, communicators, groups, topologies, queries,
/// completion calls, one-sided, I/O, ...).
pub fn skip_class(name: &str) -> Option<Skip> {
    Some(match name {
        "MPI_Send" | "MPI_Ssend" | "MPI_Rsend" | "MPI_Bsend" => Skip::Send,
        "MPI_Recv" | "MPI_Sendrecv" | "MPI_Sendrecv_replace" => Skip::Recv,
        "MPI_Isend" | "MPI_Issend" | "MPI_Irsend" | "MPI_Ibsend" | "MPI_Irecv" => Skip::Nonblocking,
        "MPI_Barrier"
        | "MPI_Bcast"
        | "MPI_Reduce"
        | "MPI_Allreduce"
        | "MPI_Gather"
        | "MPI_Gatherv"
        | "MPI_Scatter"
        | "MPI_Scatterv"
        | "MPI_Allgather"
        | "MPI_Allgatherv"
        | "MPI_Alltoall"
        | "MPI_Alltoallv"
        | "MPI_Alltoallw"
        | "MPI_Reduce_scatter"
        | "MPI_Reduce_scatter_block"
        | "MPI_Scan"
        | "MPI_Exscan" => Skip::Collective,
        "MPI_Ibarrier" | "MPI_Ibcast" | "MPI_Ireduce" | "MPI_Iallreduce" | "MPI_Igather"
        | "MPI_Iscatter" | "MPI_Iallgather" | "MPI_Ialltoall" | "MPI_Iscan" | "MPI_Iexscan" => {
            Skip::NonblockingCollective
        }
        _ => return None,
    })
}

/// Calls that complete requests: always executed; requests made up for unexecuted calls
/// complete in them without reaching MPI.
pub fn completes_requests(name: &str) -> bool {
    matches!(
        name,
        "MPI_Wait"
            | "MPI_Waitall"
            | "MPI_Waitany"
            | "MPI_Waitsome"
            | "MPI_Test"
            | "MPI_Testall"
            | "MPI_Testany"
            | "MPI_Testsome"
            | "MPI_Request_free"
    )
}

/// Calls that look at incoming messages without a request (probes, matched receives): they
/// need the real messages, so they make every point-to-point call execute.
pub fn needs_real_messages(name: &str) -> bool {
    matches!(
        name,
        "MPI_Probe" | "MPI_Iprobe" | "MPI_Mprobe" | "MPI_Improbe" | "MPI_Mrecv" | "MPI_Imrecv"
    )
}

/// The role of one parameter in slicing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A communication argument read by the call (count, datatype, peer, tag, communicator,
    /// root, op, colour, key, displacements, requests to complete, ...): the criterion.
    Criterion,
    /// A message buffer the call reads (send buffer).
    SendBuffer,
    /// A message buffer the call writes (receive buffer; `inout` buffers are both).
    RecvBuffer,
    /// A message buffer read and written (`MPI_Bcast`'s, `MPI_Sendrecv_replace`'s).
    InoutBuffer,
    /// A request the call creates: made up locally when the call is not executed.
    RequestOut,
    /// Any other result (rank, size, new communicator, status, flag, index, count, ...).
    Output,
}

/// The role of parameter `p`.
pub fn role(p: &Param) -> Role {
    let buffer = matches!(p.kind.as_str(), "BUFFER" | "C_BUFFER" | "C_BUFFER2");
    match (buffer, p.dir.as_str()) {
        (true, "in") => Role::SendBuffer,
        (true, "out") => Role::RecvBuffer,
        (true, _) => Role::InoutBuffer,
        (false, "out") if p.kind == "REQUEST" => Role::RequestOut,
        (false, "out") => Role::Output,
        // An inout request array is read to find what to complete and written with
        // MPI_REQUEST_NULL: its reading is what matters.
        (false, _) => Role::Criterion,
    }
}

/// Whether the C binding passes `p` by address (so the call reads or writes memory): a
/// status is read through a pointer too (`MPI_Get_count(const MPI_Status *, ...)`).
pub fn c_by_address(p: &Param) -> bool {
    p.dir != "in"
        || p.length.is_some()
        || matches!(
            p.kind.as_str(),
            "BUFFER" | "C_BUFFER" | "C_BUFFER2" | "STRING" | "STATUS"
        )
}

/// The roles of the arguments of a call of `f` as passed in C (`fortran == false`) or through
/// the `mpif.h` binding (every argument by address, `ierror` last and an output); `None`
/// per argument the table does not describe.
pub fn argument_roles(f: &Function, fortran: bool) -> Vec<Option<Role>> {
    if !fortran {
        return f.params.iter().map(|p| Some(role(p))).collect();
    }
    f.fortran_params
        .iter()
        .map(|fp| match fp.name.as_str() {
            "ierror" => Some(Role::Output),
            name => f.params.iter().find(|p| p.name == name).map(role),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(name: &str) -> Function {
        crate::functions()
            .into_iter()
            .find(|f| f.name == name)
            .unwrap()
    }

    #[test]
    fn roles_follow_the_standard_kinds() {
        use Role::*;
        let roles = argument_roles(&find("MPI_Irecv"), false);
        let want = [
            RecvBuffer, Criterion, Criterion, Criterion, Criterion, Criterion, RequestOut,
        ];
        assert_eq!(roles, want.map(Some));
        let roles = argument_roles(&find("MPI_Comm_split"), true);
        assert_eq!(
            roles,
            [Criterion, Criterion, Criterion, Output, Output].map(Some)
        );
        let bcast = argument_roles(&find("MPI_Bcast"), false);
        assert_eq!(bcast[0], Some(InoutBuffer));
        let waitall = argument_roles(&find("MPI_Waitall"), false);
        assert_eq!(waitall, [Criterion, Criterion, Output].map(Some));
    }

    #[test]
    fn every_skippable_function_is_in_the_table() {
        let fs = crate::functions();
        for f in &fs {
            if let Some(class) = skip_class(&f.name) {
                let creates_request = f.params.iter().any(|p| role(p) == Role::RequestOut);
                let nonblocking = matches!(class, Skip::Nonblocking | Skip::NonblockingCollective);
                assert_eq!(creates_request, nonblocking, "{}", f.name);
            }
        }
        let known = fs.iter().filter(|f| skip_class(&f.name).is_some()).count();
        assert_eq!(known, 39);
    }
}
