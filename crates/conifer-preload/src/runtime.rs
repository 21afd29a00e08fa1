//! The run's lifecycle as the wrappers see it: what happens once MPI is initialised, at the
//! application's `MPI_Finalize` and at `MPI_Abort`. The top layer: it drives the recorder
//! ([`crate::record`]), heap tracking, slicing and the end-of-run modules ([`crate::finalize`],
//! [`crate::partial`], [`crate::clock_sync`], [`crate::run_info`]), and nothing below names it.
//! The per-thread state a wrapper holds is [`crate::thread`].

/// Called once MPI is initialised (after `MPI_Init` / `MPI_Init_thread` returned).
pub fn after_init() {
    crate::run_info::remember_start();
    crate::record::after_init();
    crate::clock_sync::at_init();
    crate::partial::arm();
    crate::msglog::after_init();
}

/// The stand-in for `MPI_Finalize`'s MPI part while it is recorded (the real one runs after
/// the trace is written): the wait until every rank called it.
pub fn finalize_wait() {
    crate::clock_sync::finalize_wait();
}

/// Called at the start of the application's `MPI_Finalize`, while MPI still works: stops
/// recording and writes the trace.
pub fn before_finalize() {
    crate::partial::disarm();
    crate::msglog::at_finalize();
    crate::slice::report();
    crate::record::stop();
    crate::heap::stop_tracking();
    crate::clock_sync::at_finalize(crate::record::ns_per_tick());
    crate::finalize::write_trace(&crate::record::call_counts());
}

/// Called at the start of the application's `MPI_Abort`: the run ends here, so this rank
/// writes its partial file (the other ranks write theirs when the launcher kills them).
pub fn before_abort() {
    crate::record::stop();
    crate::partial::write("MPI_Abort");
}
