//! Why analysing a trace fails: [`AnalyzeError`].

/// Why a trace cannot be analysed.
#[derive(Debug)]
pub struct AnalyzeError(pub String);

impl std::fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
