//! Call keys: what the critical path is aggregated by. A key is a function at a call site
//! (the structure tree's `file:line` for programs built with `conifer cc`, the recorded
//! return address with `--callsites`), or the function alone when the trace has no sites.
//! Key 0 is computation.

use conifer_trace::decode::Call;
use std::collections::HashMap;

/// What one key stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// MPI function (`MPI_Waitall`), or `computation`.
    pub function: String,
    /// Call site, when the trace records it.
    pub site: Option<String>,
    /// The first call with this key: world rank and the call's index in its thread.
    pub example: Option<(u32, u64)>,
}

/// The keys met so far, numbered densely from 0 (computation).
#[derive(Debug, Clone)]
pub struct KeyTable {
    index: HashMap<(u16, u8, u64), u32>,
    infos: Vec<KeyInfo>,
}

impl Default for KeyTable {
    fn default() -> Self {
        KeyTable {
            index: HashMap::new(),
            infos: vec![KeyInfo {
                function: "computation".to_string(),
                site: None,
                example: None,
            }],
        }
    }
}

impl KeyTable {
    /// The key of `call`, numbering it if new.
    pub fn key(&mut self, call: &Call) -> u32 {
        let function = call.signature.function;
        let id = match (call.site, call.signature.caller) {
            (Some(site), _) => (function, 1, u64::from(site)),
            (None, Some(c)) => (function, 2, (u64::from(c.module) << 40) ^ c.offset),
            (None, None) => (function, 0, 0),
        };
        if let Some(&k) = self.index.get(&id) {
            return k;
        }
        let site = match (call.site, call.signature.caller) {
            (Some(_), _) => Some(call.at_source.unwrap_or("?").to_string()),
            (None, Some(c)) => {
                let module = call
                    .caller_module
                    .map_or("?", |m| m.rsplit('/').next().unwrap_or(m));
                Some(format!("{module}+{:#x}", c.offset))
            }
            (None, None) => None,
        };
        let k = self.infos.len() as u32;
        self.infos.push(KeyInfo {
            function: call.name.to_string(),
            site,
            example: Some((call.rank, call.index)),
        });
        self.index.insert(id, k);
        k
    }

    /// What key `k` stands for.
    pub fn info(&self, k: u32) -> Option<&KeyInfo> {
        self.infos.get(k as usize)
    }

    /// `function @site`, or the function alone.
    pub fn label(&self, k: u32) -> String {
        match self.info(k) {
            Some(KeyInfo {
                function,
                site: Some(s),
                ..
            }) => format!("{function} @{s}"),
            Some(i) => i.function.clone(),
            None => format!("key {k}"),
        }
    }
}
