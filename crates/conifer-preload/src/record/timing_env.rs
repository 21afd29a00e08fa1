//! The timing `CONIFER_TIMING` asks the recorder for.

use conifer_format::timing_mode::TimingMode;

/// The timing requested by `CONIFER_TIMING` (the default when unset). A value that is not a
/// timing mode must not stop the program being traced: it is named once on stderr and the
/// default used.
pub fn requested() -> TimingMode {
    let Some(text) = std::env::var_os("CONIFER_TIMING").filter(|t| !t.is_empty()) else {
        return TimingMode::default();
    };
    match TimingMode::parse(&text.to_string_lossy()) {
        Ok(mode) => mode,
        Err(why) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| say!("CONIFER_TIMING: {why}; recording aggregate timing"));
            TimingMode::default()
        }
    }
}
