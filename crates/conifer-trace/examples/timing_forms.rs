//! Compares the lossy timing forms on a trace recorded with `--timing lossless`: for each
//! relative error given, the bytes of every thread's times in the Sequitur form, in the
//! predictor form, and in the smaller of the two (what the recorder keeps), against the
//! lossless timelines' bytes.
//!
//! `cargo run --release --example timing_forms -- TRACE.cft 0.1 0.01`

use conifer_trace::lossy_timeline::encode_both;
use conifer_trace::timeline::decode;
use conifer_trace::Trace;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, rels) = args
        .split_first()
        .ok_or("usage: timing_forms TRACE.cft REL...")?;
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let trace = Trace::from_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let mut threads = Vec::new();
    for entry in &trace.record.ranks {
        for (thread, timeline) in entry.timelines.iter().enumerate() {
            let calls = trace.record.thread_calls(entry, thread);
            let times = decode(timeline, calls).ok_or("a timeline does not decode")?;
            threads.push((timeline.len(), times));
        }
    }
    let lossless: usize = threads.iter().map(|t| t.0).sum();
    let calls: usize = threads.iter().map(|t| t.1.len()).sum();
    println!("{path}: {calls} calls, lossless timelines {lossless} bytes");
    for rel in rels {
        let rel: f64 = rel.parse().map_err(|_| format!("{rel} is not a number"))?;
        let (mut grammar, mut predictor, mut kept, mut chose_grammar) = (0, 0, 0, 0);
        for (_, times) in &threads {
            let both = encode_both(times, rel);
            grammar += both.grammar.len();
            predictor += both.predictor.len();
            chose_grammar += usize::from(both.grammar.len() <= both.predictor.len());
            kept += both.smaller().len();
        }
        println!(
            "lossy:{rel}: grammar {grammar} B, predictor {predictor} B, kept {kept} B \
             (grammar on {chose_grammar}/{} threads), ratio vs lossless {:.1}",
            threads.len(),
            lossless as f64 / kept as f64
        );
    }
    Ok(())
}
