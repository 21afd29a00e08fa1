//! The hosts a run used: how many ranks each ran and how many processors it had online
//! (recorded since the trace's `CORE` section), to tell an oversubscribed run, whose ranks
//! waited for a core, from one that gave each rank its own.

use conifer_trace::Trace;
use std::collections::BTreeMap;

/// One host of a run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Host {
    /// Its name, as `MPI_Get_processor_name` gave it.
    pub name: String,
    /// The ranks that ran on it.
    pub ranks: u32,
    /// Its processors online; 0 when the trace does not record them.
    pub cores: u32,
}

impl Host {
    /// True when more ranks ran on it than it had processors.
    pub fn oversubscribed(&self) -> bool {
        self.cores > 0 && self.ranks > self.cores
    }
}

/// Every host of `trace`, by name.
pub fn hosts(trace: &Trace) -> Vec<Host> {
    let mut by_name: BTreeMap<&str, Host> = BTreeMap::new();
    for entry in &trace.record.ranks {
        let host = by_name.entry(entry.host.as_str()).or_insert_with(|| Host {
            name: entry.host.clone(),
            ranks: 0,
            cores: 0,
        });
        host.ranks += 1;
        host.cores = host.cores.max(entry.cores);
    }
    by_name.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_oversubscribed_only_when_its_processors_are_known_and_fewer() {
        let host = |ranks, cores| Host {
            name: "n".into(),
            ranks,
            cores,
        };
        assert!(host(4, 2).oversubscribed());
        assert!(!host(2, 2).oversubscribed());
        assert!(!host(4, 0).oversubscribed());
    }
}
