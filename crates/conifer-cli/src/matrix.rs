//! `conifer matrix`: the rank × rank communication matrix (row = sender, column = receiver,
//! world ranks), computed on the compressed form.

use crate::output::{emit, emit_json};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// The rule, as `--help` and docs/guide/analysis.md state it.
pub const RULE: &str = "\
Rows are senders, columns receivers, in MPI_COMM_WORLD ranks. Point-to-point: each send \
(Send, Isend, Ssend, Bsend, Rsend, the send half of Sendrecv, each Start of a persistent send) \
adds count x type size to (caller, destination); one-sided Put/Accumulate add to (origin, \
target), Get to (target, origin). Collectives add, for each pair of distinct members (i, j), \
the data i contributes to j under the collective's standard definition, whatever algorithm \
the MPI library uses: Bcast root->each, Reduce each->root, Allreduce each->each (count), \
Gather(v) each->root (sendcount), Scatter(v) root->each (recvcount), Allgather(v) each->each \
(sendcount), Alltoall(v/w) i->j (sendcount(s)[j]), Reduce_scatter(_block) i->j \
(recvcounts[j]), Scan/Exscan i->j for j>i; Barrier and neighbourhood collectives add nothing. \
On an inter-communicator (MPI_Intercomm_create), sends and Allreduce go to the remote \
group; its other collectives are left out of the matrix. A message is one entry of a call \
(a collective's entry of 0 bytes is not one).";

/// Which entries to show (the analysis' selection, shared with the Python package).
pub use conifer_analyze::MatrixSelect as Select;

/// The selection of `--metric` and `--kind` (one-line errors naming the option).
pub fn parse_select(metric: &str, kind: &str) -> Result<Select, String> {
    Select::from_words(metric, kind).map_err(|word| match word {
        conifer_analyze::UnknownWord::Metric(m) => {
            format!("unknown --metric {m:?}: use bytes or messages")
        }
        conifer_analyze::UnknownWord::Kind(k) => {
            format!("unknown --kind {k:?}: use p2p, coll or all")
        }
    })
}

/// Runs `conifer matrix`.
pub fn run(
    path: &Path,
    select: Select,
    comm: Option<&str>,
    csv: bool,
    json: bool,
    expand: bool,
) -> Result<ExitCode, String> {
    let trace = conifer_trace::open(path)?;
    if let Some(c) = comm {
        check_comm(&trace, c)?;
    }
    let options = conifer_analyze::Options {
        matrix_comm: comm.map(str::to_string),
    };
    let a = if expand {
        crate::analysis::analyze_expanded(&trace, &options)?
    } else {
        crate::analysis::analyze(&trace, &options)?
    };
    let rows = select.rows(&a.matrix);
    if json {
        emit_json(&serde_json::json!({
            "ranks": a.ranks,
            "metric": select.metric(),
            "kind": select.kind(),
            "communicator": comm,
            "rule": RULE,
            "rows": rows,
            "total": rows.iter().flatten().sum::<u64>(),
            "unresolved_calls": a.unresolved_calls,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    if csv {
        let _ = write!(s, "sender\\receiver");
        for j in 0..a.ranks {
            let _ = write!(s, ",{j}");
        }
        s.push('\n');
        for (i, row) in rows.iter().enumerate() {
            let _ = write!(s, "{i}");
            for v in row {
                let _ = write!(s, ",{v}");
            }
            s.push('\n');
        }
        emit(&s)?;
        return Ok(ExitCode::SUCCESS);
    }
    let total: u64 = rows.iter().flatten().sum();
    let _ = writeln!(
        s,
        "{} matrix ({}), {} ranks, row = sender, column = receiver{}; total {}",
        select.metric(),
        select.kind(),
        a.ranks,
        comm.map(|c| format!(
            ", calls on {c} ({})",
            crate::profile::origin(&conifer_analyze::comm_origins::comm_origins(&trace), c)
        ))
        .unwrap_or_default(),
        with_unit(total, select.messages)
    );
    if a.ranks <= 32 {
        let width = rows
            .iter()
            .flatten()
            .map(|v| grouped(*v).len())
            .max()
            .unwrap_or(1)
            .max(3);
        let _ = write!(s, "{:>5}", "");
        for j in 0..a.ranks {
            let _ = write!(s, " {j:>width$}");
        }
        s.push('\n');
        for (i, row) in rows.iter().enumerate() {
            let _ = write!(s, "{i:>5}");
            for v in row {
                if *v == 0 {
                    let _ = write!(s, " {:>width$}", ".");
                } else {
                    let _ = write!(s, " {:>width$}", grouped(*v));
                }
            }
            s.push('\n');
        }
    } else {
        let mut entries: Vec<(u64, usize, usize)> = rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.iter().enumerate().map(move |(j, v)| (*v, i, j)))
            .filter(|e| e.0 > 0)
            .collect();
        entries.sort_by(|x, y| y.cmp(x));
        let _ = writeln!(
            s,
            "{} non-zero entries (too many ranks to print the matrix: use --csv, --json or \
             `conifer plot matrix`); the largest:",
            entries.len()
        );
        for (v, i, j) in entries.iter().take(20) {
            let _ = writeln!(s, "  {i:>6} -> {j:<6} {}", with_unit(*v, select.messages));
        }
    }
    if a.unresolved_calls > 0 {
        let _ = writeln!(
            s,
            "{} calls name peers the analysis cannot resolve (inter-communicators, unknown \
             datatypes) and are not in the matrix",
            a.unresolved_calls
        );
    }
    emit(&s)?;
    Ok(ExitCode::SUCCESS)
}

/// Fails unless some call names communicator `comm` (as the decoder prints it:
/// `MPI_COMM_WORLD`, `comm3`).
fn check_comm(trace: &conifer_trace::Trace, comm: &str) -> Result<(), String> {
    let known: std::collections::BTreeSet<String> = trace
        .record
        .signatures
        .iter()
        .filter_map(|s| conifer_trace::decode::Signature::parse(s))
        .flat_map(|s| s.values)
        .filter_map(|v| match v {
            conifer_trace::value::Value::Handle(conifer_trace::value::HandleKind::Comm, _) => {
                Some(v.display(None).to_string())
            }
            _ => None,
        })
        .collect();
    let id = conifer_analyze::context::comm_id_of_name(comm);
    let table = conifer_analyze::context::CommTable::new(trace);
    let parts: Vec<String> = table
        .groups()
        .iter()
        .map(|(g, _)| table.label(g))
        .filter(|l| l != id && conifer_analyze::context::comm_id_of_name(l) == id)
        .collect();
    if !known.contains(id) || (comm != id && !parts.iter().any(|p| p == comm)) {
        let list: Vec<&str> = known.iter().map(String::as_str).collect();
        return Err(format!(
            "no call names communicator {comm:?}; the trace's communicators: {} \
             (`conifer decode --comms` lists each with its members)",
            list.join(", ")
        ));
    }
    Ok(())
}

/// `v` with its thousands grouped by commas (`44,605,100`), as the text matrix prints counts.
fn grouped(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A total with its unit: `89,210,200 bytes (85.1 MiB)` or `1,200 messages`.
fn with_unit(v: u64, messages: bool) -> String {
    if messages {
        format!("{} messages", grouped(v))
    } else if v >= 1024 {
        format!("{} bytes ({})", grouped(v), conifer_analyze::human_bytes(v))
    } else {
        format!("{} bytes", grouped(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands_with_their_unit() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(44_605_100), "44,605,100");
        assert_eq!(with_unit(89_210_200, false), "89,210,200 bytes (85.1 MiB)");
        assert_eq!(with_unit(512, false), "512 bytes");
        assert_eq!(with_unit(1200, true), "1,200 messages");
    }
}
