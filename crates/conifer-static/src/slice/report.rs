//! What slicing removed and which MPI calls execute, embedded in the binary (section
//! [`SECTION`]) for `conifer tree` and printed by `conifer cc --slice -v`.

use serde::{Deserialize, Serialize};

/// ELF section holding the report (JSON).
pub const SECTION: &str = ".conifer_slice";

/// One MPI call site.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// `file:line`, or `?` without debug information.
    pub at: String,
    /// The MPI function (C spelling).
    pub function: String,
    /// Executed at run time; unmarked calls are recorded only.
    pub marked: bool,
}

/// A guarded version (conditioned slicing): where it starts and what it keeps.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Guard {
    /// `file:line` of the branch whose condition the guard simplifies.
    pub at: String,
    /// The function holding it.
    pub function: String,
    /// That line of source, when it could be read.
    pub condition: String,
    /// The comparison the guard evaluates (`deck_ < 0`).
    pub comparison: String,
    /// The comparison's value that runs the guarded version.
    pub when: bool,
    /// `file:line` where the guard is evaluated and the versions part.
    pub dispatch: String,
    /// Instructions the guarded version's run keeps (the full run keeps `Report::kept`).
    pub kept: usize,
}

/// The slicing report.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct Report {
    /// Instructions in the program's functions before slicing.
    pub instructions: usize,
    /// Instructions left.
    pub kept: usize,
    /// Source lines with code before slicing.
    pub lines: usize,
    /// Source lines whose code was all removed.
    pub lines_removed: usize,
    /// Functions emptied (no live code runs in them).
    pub functions_emptied: Vec<String>,
    /// Every MPI call site.
    pub sites: Vec<Site>,
    /// Where the analysis had to keep code it could not bound.
    pub caveats: Vec<String>,
    /// The functions keeping the most instructions, each with the chain that makes its first
    /// kept store or call live.
    #[serde(default)]
    pub kept_because: Vec<String>,
    /// Seconds the analysis and transformation took.
    pub seconds: f64,
    /// Guarded versions: the program runs the guarded version when its comparison has the
    /// stated value, the full slice (`kept`) otherwise.
    #[serde(default)]
    pub guards: Vec<Guard>,
}

impl Report {
    /// Fraction of instructions kept.
    pub fn fraction(&self) -> f64 {
        self.kept as f64 / self.instructions.max(1) as f64
    }

    /// The report as text.
    pub fn render(&self) -> String {
        let marked = self.sites.iter().filter(|s| s.marked).count();
        let mut out = format!(
            "slice: {} of {} instructions kept ({:.1}%), {} of {} source lines removed, {} functions emptied, {:.2} s\n",
            self.kept,
            self.instructions,
            100.0 * self.fraction(),
            self.lines_removed,
            self.lines,
            self.functions_emptied.len(),
            self.seconds,
        );
        out += &format!(
            "slice: {} MPI call sites, {marked} marked (executed), {} unmarked (recorded only)\n",
            self.sites.len(),
            self.sites.len() - marked
        );
        for s in &self.sites {
            let state = if s.marked { "marked" } else { "unmarked" };
            out += &format!("  {:<8} {} {}\n", state, s.function, s.at);
        }
        if !self.functions_emptied.is_empty() {
            out += &format!("  emptied: {}\n", self.functions_emptied.join(", "));
        }
        for g in &self.guards {
            out += &format!(
                "  guard  {} in {}: `{}`\n    when `{}` is {} (evaluated at {}): {} of {} instructions kept ({:.1}%); otherwise the full slice above\n",
                g.at,
                g.function,
                g.condition,
                g.comparison,
                g.when,
                g.dispatch,
                g.kept,
                self.instructions,
                100.0 * g.kept as f64 / self.instructions.max(1) as f64,
            );
        }
        for c in &self.caveats {
            out += &format!("  kept: {c}\n");
        }
        for k in &self.kept_because {
            out += &format!("  why: {k}\n");
        }
        out
    }
}
