//! `conifer decode --comms`: every communicator of a run with its members, as every reader
//! (`sim`, the exports, `waits`, `matrix --comm`, `profile`) sees them.

use conifer_analyze::context::CommTable;
use conifer_trace::open as load;
use conifer_trace::value::{HandleKind, HandleRef, Value};
use conifer_trace::varint::Reader;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Members as text: world ranks by local rank, runs of consecutive ranks as `a-b`, `?` for a
/// local rank no rank of the trace claims.
fn members_text(members: &[Option<u32>]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < members.len() {
        let Some(first) = members[i] else {
            parts.push("?".into());
            i += 1;
            continue;
        };
        let mut j = i;
        while j + 1 < members.len() && members[j + 1] == Some(first + (j + 1 - i) as u32) {
            j += 1;
        }
        parts.push(match j - i {
            0 => first.to_string(),
            1 => format!("{first},{}", first + 1),
            n => format!("{first}-{}", first + n as u32),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Prints the communicator table of the trace at `path`, one line (or JSON object) per
/// communicator: predefined ones first, then by id and leader.
pub fn print(path: &Path, json: bool) -> Result<ExitCode, String> {
    let trace = load(path)?;
    let table = CommTable::new(&trace);
    let origins = conifer_analyze::comm_origins::comm_origins(&trace);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (group, members) in table.groups() {
        let Some(value) = Value::decode(&mut Reader::new(&group.id)) else {
            continue;
        };
        // Groups and windows share the column; MPI_COMM_NULL and MPI_COMM_SELF (one per
        // rank) are no communicators to list.
        if !matches!(
            value,
            Value::Handle(HandleKind::Comm, HandleRef::Id(_) | HandleRef::Named(1))
        ) {
            continue;
        }
        let id = value.display(None).to_string();
        let name = table.label(&group);
        let made = origins.get(&id).map_or("predefined", String::as_str);
        let written = if json {
            let line = serde_json::json!({
                "name": name,
                "id": id,
                "leader": members.first().copied().flatten(),
                "members": members,
                "made": made,
            });
            writeln!(out, "{line}")
        } else {
            writeln!(
                out,
                "{name:<14} size {:<5} ranks {}   ({made})",
                members.len(),
                members_text(members)
            )
        };
        if written.is_err() {
            return Ok(ExitCode::SUCCESS);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::members_text;

    #[test]
    fn member_runs() {
        assert_eq!(members_text(&[Some(0), Some(1), Some(2), Some(3)]), "0-3");
        assert_eq!(members_text(&[Some(1), Some(5), Some(9)]), "1,5,9");
        assert_eq!(members_text(&[Some(4), Some(5), None, Some(7)]), "4,5,?,7");
        assert_eq!(members_text(&[Some(3)]), "3");
    }
}
