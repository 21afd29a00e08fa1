//! `conifer decode`: every call with every argument, rank by rank.

use conifer_trace::open as load;
use conifer_trace::ReadCalls;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Which ranks to print.
pub fn parse_ranks(
    rank: Option<u32>,
    ranks: Option<&str>,
    total: u32,
) -> Result<std::ops::Range<u32>, String> {
    let range = match (rank, ranks) {
        (Some(_), Some(_)) => return Err("give --rank or --ranks, not both".into()),
        (Some(r), None) => r..r + 1,
        (None, Some(spec)) => {
            let (a, b) = spec
                .split_once('-')
                .ok_or_else(|| format!("--ranks {spec}: expected A-B, e.g. --ranks 0-3"))?;
            let parse = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("--ranks {spec}: {s:?} is not a rank"))
            };
            let (a, b) = (parse(a)?, parse(b)?);
            if a > b {
                return Err(format!(
                    "--ranks {spec}: the first rank is larger than the last"
                ));
            }
            a..b + 1
        }
        (None, None) => 0..total,
    };
    if range.end > total {
        return Err(format!(
            "rank {} does not exist: the trace has ranks 0-{}",
            range.end - 1,
            total.saturating_sub(1)
        ));
    }
    Ok(range)
}

/// Prints the calls of the selected ranks.
pub fn print(
    path: &Path,
    rank: Option<u32>,
    ranks: Option<&str>,
    json: bool,
) -> Result<ExitCode, String> {
    let trace = load(path)?;
    let range = parse_ranks(rank, ranks, trace.meta.ranks)?;
    if trace.meta.partial {
        // On stderr, so the calls on stdout stay one per line.
        eprintln!("conifer: {}", crate::stats::partial_summary(&trace.meta));
    }
    if !json {
        // On stderr too: what the communicator ids stand for.
        for (name, made) in conifer_analyze::comm_origins::comm_origins(&trace) {
            eprintln!("conifer: {name} = {made}");
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let reader = trace.reader();
    for r in range {
        for call in reader.calls(r) {
            let call = call.map_err(|e| format!("{}: {e}", path.display()))?;
            let written = if json {
                let args: serde_json::Map<String, serde_json::Value> = call
                    .signature
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let name = call
                            .slots
                            .get(i)
                            .cloned()
                            .unwrap_or_else(|| format!("arg{i}"));
                        (
                            name,
                            serde_json::Value::String(v.display(call.position(i)).to_string()),
                        )
                    })
                    .collect();
                let line = serde_json::json!({
                    "rank": call.rank,
                    "thread": call.signature.thread,
                    "index": call.index,
                    "function": call.name,
                    "args": args,
                    "ret": call.signature.ret,
                    "mean_ns": call.timing.map(|t| t.duration.mean()),
                    "mean_interval_ns": call.timing.map(|t| t.interval.mean()),
                    "duration_ns": call.time.map(|t| t.duration_ns),
                    "interval_ns": call.time.map(|t| t.interval_ns),
                    "start_ns": call.start_ns,
                    "recorder_pre_ns": call.recorder.map(|r| r.pre_ns),
                    "recorder_post_ns": call.recorder.map(|r| r.post_ns),
                    "run": call.run.map(|r| serde_json::json!({
                        "enter_ns": r.enter_ns,
                        "start_ns": r.start_ns,
                        "end_ns": r.end_ns,
                        "exit_ns": r.exit_ns,
                    })),
                    "site": call.site,
                    "source": call.at_source,
                    "caller": call.signature.caller.map(|c| serde_json::json!({
                        "module": call.caller_module,
                        "offset": c.offset,
                    })),
                });
                writeln!(out, "{line}")
            } else {
                writeln!(out, "{call}")
            };
            if written.is_err() {
                return Ok(ExitCode::SUCCESS); // reader went away (e.g. `| head`)
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
