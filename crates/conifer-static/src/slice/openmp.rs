//! The OpenMP runtime (libomp's `__kmpc_*` entry points, clang's lowering of `#pragma omp`) as
//! the slicer sees it. A parallel region is a call: `__kmpc_fork_call(loc, n, outlined,
//! shared...)` runs `outlined(&gtid, &btid, shared...)` on every thread, and a reduction's
//! `__kmpc_reduce(_nowait)(loc, gtid, n, size, data, combine, lock)` may run
//! `combine(data, data)` on two threads' lists of private copies ([`callback`], [`actual`]).
//! Worksharing bookkeeping reads and writes only what its pointers point to (the bounds of a
//! static loop), queries only compute, and the calls that order threads ([`orders`]) stay
//! wherever code of their function stays. Everything else (dynamic schedules, tasks, setting
//! the number of threads) is an unknown function, kept.

use super::class::External;

/// Runtime functions that call a function of the program: (name, position of the function
/// argument).
const CALLBACKS: [(&str, usize); 3] = [
    ("__kmpc_fork_call", 2),
    ("__kmpc_reduce_nowait", 5),
    ("__kmpc_reduce", 5),
];

/// Calls ordering the threads of a team: removing one while code around it stays could let
/// a kept read race ahead of a kept write; pairs (`single`/`end_single`) must stay together.
const ORDERS: [&str; 17] = [
    "__kmpc_barrier",
    "__kmpc_critical",
    "__kmpc_critical_with_hint",
    "__kmpc_end_critical",
    "__kmpc_single",
    "__kmpc_end_single",
    "__kmpc_master",
    "__kmpc_end_master",
    "__kmpc_masked",
    "__kmpc_end_masked",
    "__kmpc_ordered",
    "__kmpc_end_ordered",
    "__kmpc_flush",
    "__kmpc_reduce",
    "__kmpc_end_reduce",
    "__kmpc_reduce_nowait",
    "__kmpc_end_reduce_nowait",
];

/// Static worksharing: `__kmpc_for_static_init_*(loc, gtid, schedule, &last, &lower, &upper,
/// &stride, increment, chunk)` reads and writes the bounds its pointers point to.
const STATIC_INIT: [&str; 4] = [
    "__kmpc_for_static_init_4",
    "__kmpc_for_static_init_4u",
    "__kmpc_for_static_init_8",
    "__kmpc_for_static_init_8u",
];

/// Queries and bookkeeping without memory effects the program sees.
const PURE: [&str; 11] = [
    "__kmpc_global_thread_num",
    "__kmpc_for_static_fini",
    "omp_get_thread_num",
    "omp_get_num_threads",
    "omp_get_max_threads",
    "omp_get_num_procs",
    "omp_in_parallel",
    "omp_get_level",
    "omp_get_wtime",
    "omp_get_wtick",
    "omp_get_thread_limit",
];

/// The class of OpenMP runtime function `name`, if it is one the slicer knows.
pub fn classify(name: &str) -> Option<External> {
    if STATIC_INIT.contains(&name) {
        Some(External::Updates)
    } else if PURE.contains(&name)
        || ORDERS.contains(&name)
        || CALLBACKS.iter().any(|&(n, _)| n == name)
    {
        // The memory a callback reads and writes is its callee's (the call is analysed as a
        // call of it); an ordering call touches only the runtime's own state.
        Some(External::Pure)
    } else {
        None
    }
}

/// Whether runtime function `name` orders threads ([`ORDERS`]): kept wherever code of its
/// function is.
pub fn orders(name: &str) -> bool {
    ORDERS.contains(&name)
}

/// The position of the argument naming the function runtime function `name` calls back.
pub fn callback(name: &str) -> Option<usize> {
    CALLBACKS.iter().find(|&&(n, _)| n == name).map(|&(_, k)| k)
}

/// The position of the argument of a call of runtime function `name` that the function it
/// calls back receives as its parameter `k`, if one does (an outlined region's thread ids
/// are the runtime's).
pub fn actual(name: &str, k: usize) -> Option<usize> {
    match name {
        "__kmpc_fork_call" => (k >= 2).then_some(k + 1),
        // Both operands of a combination are lists like the one passed.
        _ => (k < 2).then_some(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_passes_the_shared_variables_after_the_thread_ids() {
        assert_eq!(callback("__kmpc_fork_call"), Some(2));
        assert_eq!(actual("__kmpc_fork_call", 0), None);
        assert_eq!(actual("__kmpc_fork_call", 2), Some(3));
        assert_eq!(actual("__kmpc_reduce_nowait", 1), Some(4));
        assert_eq!(
            classify("__kmpc_for_static_init_4"),
            Some(External::Updates)
        );
        assert!(orders("__kmpc_barrier") && !orders("__kmpc_for_static_fini"));
        assert_eq!(classify("__kmpc_push_num_threads"), None);
    }
}
