//! What every picture is drawn from.

use super::window::Window;
use conifer_analyze::times::Times;
use conifer_analyze::Analysis;
use conifer_trace::Trace;

/// What the pictures are drawn from.
pub struct Inputs<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// Its analysis.
    pub analysis: &'a Analysis,
    /// Its times.
    pub times: &'a Times,
    /// The trace's file name (for titles).
    pub name: String,
    /// The part of the run the timeline draws.
    pub window: Window,
}
