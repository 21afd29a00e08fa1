//! MPI calls as the slicer sees them: the role of each argument (from the spec table,
//! [`conifer_spec::slicing`]), whether it is passed by address, and what the runtime may do
//! with the call when it is unmarked.

use super::ir::V;
use conifer_spec::slicing::{self, Role, Skip};
use conifer_spec::Function;
use std::sync::OnceLock;

fn table() -> &'static [Function] {
    static TABLE: OnceLock<Vec<Function>> = OnceLock::new();
    TABLE.get_or_init(conifer_spec::functions)
}

/// One MPI call's function.
pub struct MpiCall {
    /// C name (`MPI_Send`, also for `mpi_send_`).
    pub name: String,
    /// Called through the Fortran binding (every argument by address).
    pub fortran: bool,
    /// Roles of the arguments, when the spec table knows the function.
    roles: Option<Vec<Option<Role>>>,
    spec: Option<&'static Function>,
}

impl MpiCall {
    /// The MPI call of a callee symbol, or `None` for other symbols.
    pub fn new(symbol: &str) -> Option<MpiCall> {
        let name = crate::ir::mpi_name(symbol)?;
        let fortran = symbol.starts_with("mpi_") || symbol.starts_with("pmpi_");
        let spec = table().iter().find(|f| f.name == name);
        let roles = spec.map(|f| slicing::argument_roles(f, fortran));
        Some(MpiCall {
            name,
            fortran,
            roles,
            spec,
        })
    }

    /// The role of argument `i` (`None`: the table does not describe it, or the function).
    pub fn role(&self, i: usize) -> Option<Role> {
        self.roles
            .as_ref()
            .and_then(|r| r.get(i).copied().flatten())
    }

    /// Whether argument `i` is passed by address (the call reads or writes what it points to).
    pub fn by_address(&self, i: usize) -> bool {
        if self.fortran {
            return true;
        }
        match self.spec.and_then(|f| f.params.get(i)) {
            Some(p) => slicing::c_by_address(p),
            None => true,
        }
    }

    /// What the runtime does with the call when unmarked (C and Fortran alike); `None` when it
    /// always executes it.
    pub fn skip(&self) -> Option<Skip> {
        slicing::skip_class(&self.name)
    }

    /// The position of the argument of kind `kind` (`COMMUNICATOR`, `RANK`, …), as the C and
    /// Fortran bindings both order it.
    pub fn argument_of_kind(&self, kind: &str) -> Option<usize> {
        self.spec?.params.iter().position(|p| p.kind == kind)
    }

    /// Whether the call completes requests (always executed, fakes completed locally).
    pub fn completes(&self) -> bool {
        slicing::completes_requests(&self.name)
    }

    /// Whether the call inspects incoming messages without a request (probes).
    pub fn needs_messages(&self) -> bool {
        slicing::needs_real_messages(&self.name)
    }

    /// Whether the call may run a user function on its buffers (reductions and scans with a
    /// user-defined operation).
    pub fn takes_user_function(&self) -> bool {
        let name = self.name.to_ascii_lowercase();
        name.contains("reduce") || name.contains("scan")
    }

    /// Arguments the call writes a result into other than message buffers (handles, ranks,
    /// statuses, requests), with their roles.
    pub fn outputs(&self, args: &[V]) -> Vec<(V, Role)> {
        args.iter()
            .enumerate()
            .filter_map(|(i, &a)| match self.role(i) {
                Some(r @ (Role::Output | Role::RequestOut)) => Some((a, r)),
                _ => None,
            })
            .collect()
    }
}
