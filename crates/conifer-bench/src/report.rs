//! The results: tables of rows, each row with the exact command that produced it, written as
//! `bench/results.md` (for people) and `bench/results.json` (for tools).

use serde::Serialize;
use serde_json::Value;

/// One table of results.
#[derive(Serialize)]
pub struct Table {
    /// Heading.
    pub title: String,
    /// What the table measures and how to read it, one sentence.
    pub note: String,
    /// Column names.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// One measured row.
#[derive(Serialize)]
pub struct Row {
    /// Cell values, in column order.
    pub cells: Vec<Value>,
    /// The command that produced the row (the traced variant where there are two).
    pub command: String,
}

impl Table {
    /// An empty table.
    pub fn new(title: &str, note: &str, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            note: note.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row and echoes it as progress.
    pub fn push(&mut self, cells: Vec<Value>, command: String) {
        eprintln!(
            "  {}",
            cells.iter().map(plain).collect::<Vec<_>>().join("  ")
        );
        self.rows.push(Row { cells, command });
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.3}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Everything one `make bench` produced.
#[derive(Serialize)]
pub struct Report {
    /// UTC date and time of the run.
    pub date: String,
    /// CPU cores of the machine.
    pub cores: usize,
    /// `MPI_Get_library_version`-style version lines of the MPIs benchmarked.
    pub mpi_versions: Vec<String>,
    /// QUICK mode (fewer repetitions).
    pub quick: bool,
    /// The tables.
    pub tables: Vec<Table>,
}

impl Report {
    /// The Markdown rendering.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        md.push_str("# Conifer benchmark results\n\n");
        md.push_str(&format!(
            "Date: {} · cores: {} · MPI: {} · mode: {}\n\n",
            self.date,
            self.cores,
            self.mpi_versions.join("; "),
            if self.quick { "QUICK" } else { "full" }
        ));
        md.push_str("Produced by `make bench` (crates/conifer-bench); every number is measured in that run. ");
        md.push_str("Times are medians of interleaved traced/untraced runs on a shared 2-core machine: read ratios, not absolute times.\n\n");
        for t in &self.tables {
            md.push_str(&format!("## {}\n\n{}\n\n", t.title, t.note));
            if t.columns.is_empty() {
                continue; // a suite that failed: the note says why
            }
            md.push_str(&format!("| {} |\n", t.columns.join(" | ")));
            md.push_str(&format!("|{}\n", "---|".repeat(t.columns.len())));
            for r in &t.rows {
                md.push_str(&format!(
                    "| {} |\n",
                    r.cells.iter().map(plain).collect::<Vec<_>>().join(" | ")
                ));
            }
            md.push_str("\n<details><summary>commands</summary>\n\n");
            for r in &t.rows {
                md.push_str(&format!("- `{}`\n", r.command));
            }
            md.push_str("\n</details>\n\n");
        }
        md
    }
}

/// A table cell holding text.
pub fn s(v: &str) -> serde_json::Value {
    serde_json::Value::String(v.into())
}
