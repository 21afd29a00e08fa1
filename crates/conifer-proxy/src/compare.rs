//! Comparing a proxy's trace with the original's, call by call per rank.
//!
//! Two calls are equal when they call the same function with the same values in every slot
//! but these, which legitimately differ between the original and its proxy:
//! - buffers (segment ids and stack offsets name the proxy's own memory), statuses and
//!   values not interpreted (`?`), and whether a status was ignored;
//! - the outcome of nondeterministic completion calls (`MPI_Waitany`, `MPI_Waitsome`,
//!   `MPI_Test*`, `MPI_Iprobe`): only their function and counts are compared, since the
//!   run decides which requests complete when.
//!
//! Request ids are compared by pool (the creating call), not by their index in it; not at
//! all when the original's pools were split by call site (tree mode, `--callsites`).
//!
//! Ranks are compared restored (a peer is the rank it names for the caller), so codes the
//! merge chose differently for the two runs still compare equal.

use crate::args::NONDETERMINISTIC;
use conifer_trace::decode::Call;
use conifer_trace::value::Value;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;

/// One difference between the traces.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// World rank.
    pub rank: u32,
    /// Call index in the rank's sequence.
    pub index: u64,
    /// What differs.
    pub why: String,
}

/// Compares `proxy` with `original`: at most `limit` differences per rank are reported (a
/// rank's comparison stops at its first call to another function).
pub fn compare(original: &Trace, proxy: &Trace, limit: usize) -> Result<Vec<Difference>, String> {
    if original.meta.ranks != proxy.meta.ranks {
        return Ok(vec![Difference {
            rank: 0,
            index: 0,
            why: format!(
                "{} ranks, the proxy ran {}",
                original.meta.ranks, proxy.meta.ranks
            ),
        }]);
    }
    // Pools follow creating signatures; with call sites in them (tree mode, `--callsites`)
    // the original's pools split by call site and the proxy's cannot.
    let pools =
        original.record.forest.is_none() && !original.meta.options.iter().any(|o| o == "callsites");
    let (ra, rb) = (original.reader(), proxy.reader());
    let mut out = Vec::new();
    for rank in 0..original.meta.ranks {
        let mut a = ra.calls(rank);
        let mut b = rb.calls(rank);
        let mut found = 0;
        let mut index = 0u64;
        loop {
            let (x, y) = (a.next().transpose(), b.next().transpose());
            let (x, y) = (x.map_err(|e| e.to_string())?, y.map_err(|e| e.to_string())?);
            let why = match (&x, &y) {
                (None, None) => break,
                (Some(x), None) => Some(format!("the proxy ends here; the original calls {x}")),
                (None, Some(y)) => Some(format!("the original ends here; the proxy calls {y}")),
                (Some(x), Some(y)) => call_difference(x, y, pools),
            };
            if let Some(why) = why {
                let stop = x
                    .as_ref()
                    .zip(y.as_ref())
                    .is_none_or(|(x, y)| x.name != y.name);
                out.push(Difference { rank, index, why });
                found += 1;
                if stop || found >= limit {
                    break;
                }
            }
            index += 1;
        }
    }
    Ok(out)
}

/// Why call `b` (of the proxy) is not equal to `a` (of the original), if it is not.
fn call_difference(a: &Call, b: &Call, pools: bool) -> Option<String> {
    if a.name != b.name {
        return Some(format!(
            "the original calls {}, the proxy {}",
            a.name, b.name
        ));
    }
    if a.name == "free" {
        return None;
    }
    let loose = NONDETERMINISTIC.contains(&a.name);
    let mut why = Vec::new();
    for (i, slot) in a.slots.iter().enumerate() {
        let (Some(x), Some(y)) = (a.signature.values.get(i), b.signature.values.get(i)) else {
            continue;
        };
        if ignored(x) || ignored(y) || (loose && !matches!(slot.as_str(), "count" | "incount")) {
            continue;
        }
        let (x, y) = (
            shown(&x.display(a.position(i)).to_string(), pools),
            shown(&y.display(b.position(i)).to_string(), pools),
        );
        if x != y {
            why.push(format!("{slot}: {x} vs {y}"));
        }
    }
    if a.signature.ret != b.signature.ret {
        why.push(format!(
            "returned {} vs {}",
            a.signature.ret, b.signature.ret
        ));
    }
    (!why.is_empty()).then(|| format!("{}: {}", a.name, why.join(", ")))
}

/// A value's text with request ids cut to their pool (`req3.1` → `req3`), or to nothing
/// unless `pools`: the index within the pool counts the requests the recorder saw
/// completed, and the proxy completes some with PMPI calls it does not see.
fn shown(text: &str, pools: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("req") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let digits = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        if pools {
            out.push_str(&tail[..digits]);
        }
        rest = &tail[digits..];
        if digits > 0 && rest.starts_with('.') {
            let n = rest[1..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(rest.len(), |k| k + 1);
            rest = &rest[n..];
        }
    }
    out.push_str(rest);
    out
}

/// Values not compared: memory, statuses, uninterpreted values.
fn ignored(v: &Value) -> bool {
    matches!(
        v,
        Value::Buffer(_) | Value::Status(_) | Value::Ignored | Value::Opaque
    ) || matches!(v, Value::Array(items) if items.iter().any(|i| matches!(i, Value::Status(_))))
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn request_ids_shown_by_pool_or_not_at_all() {
        let text = "[req3.1,MPI_REQUEST_NULL,req12.0]";
        assert_eq!(shown(text, true), "[req3,MPI_REQUEST_NULL,req12]");
        assert_eq!(shown(text, false), "[req,MPI_REQUEST_NULL,req]");
        assert_eq!(shown("comm2", true), "comm2");
    }
}
