//! Where calls were made: the key the statistics per call site are kept under.

use serde::Serialize;

/// Where calls were made: a structure-tree call site (tree mode), else the recorded caller
/// (`--callsites`), else the timing family of the signature (about one per call site), else
/// the signature itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "id", rename_all = "lowercase")]
pub enum Site {
    /// A call site of the structure tree (its id in the binary's tree).
    Tree(u32),
    /// A recorded caller: the return address as module key and offset.
    Address {
        /// [`conifer_trace::caller::module_key`] of the module.
        module: u32,
        /// Offset of the return address in the module's file.
        offset: u64,
    },
    /// A timing family (index into the trace's timing families).
    Family(u32),
    /// A signature without timing.
    Signature(u32),
}
