//! Output helpers of the read commands: printing that exits quietly (status 0) when the
//! reader of a pipe went away, and progress bars on a terminal only.

use std::io::{IsTerminal, Write};

/// Writes `text` to stdout; a closed pipe (`conifer profile x.cft | head`) ends the process
/// with status 0, silently.
pub fn emit(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

/// `writeln!` into a `String` (which cannot fail): the commands build their text output and
/// print it with [`emit`], which ends quietly when the reader has gone.
macro_rules! outln {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}
pub(crate) use outln;

/// Prints a JSON value.
pub fn emit_json(v: &serde_json::Value) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    text.push('\n');
    emit(&text)
}

/// A progress bar on stderr when it is a terminal; hidden otherwise.
pub fn progress(what: &str, total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() || std::env::var_os("CONIFER_NO_PROGRESS").is_some() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ranks {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}
