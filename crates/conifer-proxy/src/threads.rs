//! A rank's threads other than the first, run as POSIX threads: each is started by the first
//! thread once every object it uses that the first thread made exists (after the first
//! thread's last call naming one for the first time), and joined before the first thread
//! frees one of them (or before its `MPI_Finalize`). Thread `k` makes its first call only
//! after thread `k - 1` made its own, so the recorder numbers the proxy's threads as it
//! numbered the original's (in order of their first calls).

use conifer_trace::decode::Call;
use conifer_trace::value::{HandleKind, HandleRef, Value};
use std::collections::{HashMap, HashSet};

/// An object a call names: kind and symbolic id (requests left out: each thread has its own).
pub type Object = (HandleKind, u32);

/// The objects `call` names.
pub fn objects(call: &Call) -> Vec<Object> {
    let mut out = Vec::new();
    for v in &call.signature.values {
        let items = match v {
            Value::Array(items) => items.as_slice(),
            one => std::slice::from_ref(one),
        };
        for item in items {
            if let Value::Handle(kind, HandleRef::Id(id)) = item {
                if *kind != HandleKind::Request {
                    out.push((*kind, *id));
                }
            }
        }
    }
    out
}

/// Whether function `name` frees or closes the objects it names.
pub fn frees(name: &str) -> bool {
    name.ends_with("_free") || matches!(name, "MPI_File_close" | "MPI_Comm_disconnect")
}

/// What the first thread of a rank did, for placing the other threads.
#[derive(Default)]
pub struct FirstThread {
    /// Per object, the index of the call naming it first.
    pub first_named: HashMap<Object, usize>,
    /// Calls freeing objects: index and the objects.
    pub frees: Vec<(usize, Vec<Object>)>,
    /// Index of its `MPI_Finalize`.
    pub finalize: Option<usize>,
}

/// Where the first thread starts and joins thread `k`: after its call `spawn` (`None`:
/// before its first call) and before its call `join` (`None`: when it is done).
#[derive(Debug, PartialEq)]
pub struct Placement {
    /// Call after which the thread starts.
    pub spawn: Option<usize>,
    /// Call before which the thread is joined.
    pub join: Option<usize>,
}

/// Places a thread that names `uses`.
pub fn place(first: &FirstThread, uses: &HashSet<Object>) -> Placement {
    let spawn = uses
        .iter()
        .filter_map(|o| first.first_named.get(o).copied())
        .max();
    let join = first
        .frees
        .iter()
        .find(|(i, objects)| {
            spawn.is_none_or(|s| *i > s) && objects.iter().any(|o| uses.contains(o))
        })
        .map(|(i, _)| *i)
        .or(first.finalize);
    Placement { spawn, join }
}

/// The C that runs threads: a job per thread (its class's start rule and where its table
/// cursors start, when the program has `tables`), `spawn_`, `join_`, and the flags ordering
/// the threads' first calls.
pub fn helpers(tables: bool) -> String {
    let start = if tables {
        "    if (j->n) start_(j->at, j->first, j->n);\n"
    } else {
        ""
    };
    format!(
        r#"
typedef struct {{ void (*run)(void); const int *at; int first, n; }} job_t;
static job_t jobs_[64];
static pthread_t th_[64];
static volatile int started_[64];
static void *thread_main_(void *p) {{
    job_t *j = p;
    int k = (int)(j - jobs_);
    while (!started_[k - 1]) sched_yield();
{start}    j->run();
    return NULL;
}}
static void spawn_(int k) {{ pthread_create(&th_[k], NULL, thread_main_, &jobs_[k]); }}
static void join_(int k) {{ pthread_join(th_[k], NULL); }}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_start_once_their_objects_exist_and_join_before_they_are_freed() {
        let comm = |id| (HandleKind::Comm, id);
        let first = FirstThread {
            first_named: HashMap::from([(comm(1), 3), (comm(2), 4)]),
            frees: vec![(2, vec![comm(9)]), (6, vec![comm(1)]), (7, vec![comm(2)])],
            finalize: Some(9),
        };
        let uses = HashSet::from([comm(2)]);
        assert_eq!(
            place(&first, &uses),
            Placement {
                spawn: Some(4),
                join: Some(7)
            }
        );
        let own = HashSet::from([comm(5)]);
        assert_eq!(
            place(&first, &own),
            Placement {
                spawn: None,
                join: Some(9)
            }
        );
    }
}
