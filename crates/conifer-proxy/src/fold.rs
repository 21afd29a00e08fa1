//! Folding a rank's straight-line statements into `for` loops: the longest-covering run of
//! a repeated block of consecutive statements (up to [`MAX_PERIOD`] statements long) becomes
//! one loop, its body folded again.

use std::collections::HashMap;

/// The longest block of statements a loop body is searched for.
pub const MAX_PERIOD: usize = 512;

/// A folded statement sequence.
#[derive(Debug, PartialEq)]
pub enum Block {
    /// One statement (an index into the distinct statements).
    Line(u32),
    /// A body repeated this many times.
    Loop(u64, Vec<Block>),
}

/// Interns statements so blocks compare as integers.
#[derive(Default)]
pub struct Lines {
    ids: HashMap<String, u32>,
    /// The distinct statements, by id.
    pub text: Vec<String>,
}

impl Lines {
    /// The id of `line`.
    pub fn id(&mut self, line: String) -> u32 {
        if let Some(&id) = self.ids.get(&line) {
            return id;
        }
        let id = self.text.len() as u32;
        self.text.push(line.clone());
        self.ids.insert(line, id);
        id
    }
}

/// Folds `seq` into loops.
pub fn fold(seq: &[u32]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < seq.len() {
        let (mut best_p, mut best_reps) = (1, 1);
        for p in 1..=MAX_PERIOD.min((seq.len() - i) / 2) {
            let mut reps = 1;
            while i + (reps + 1) * p <= seq.len()
                && seq[i + reps * p..i + (reps + 1) * p] == seq[i..i + p]
            {
                reps += 1;
            }
            if reps >= 2 && reps * p > best_reps * best_p {
                (best_p, best_reps) = (p, reps);
            }
        }
        if best_reps >= 2 {
            out.push(Block::Loop(best_reps as u64, fold(&seq[i..i + best_p])));
            i += best_reps * best_p;
        } else {
            out.push(Block::Line(seq[i]));
            i += 1;
        }
    }
    out
}

/// Writes blocks as C at nesting `depth` (loop variables `i0`, `i1`, ...).
pub fn render(blocks: &[Block], lines: &Lines, depth: usize, out: &mut String) {
    let indent = "    ".repeat(depth + 1);
    for b in blocks {
        match b {
            Block::Line(id) => {
                out.push_str(&indent);
                out.push_str(&lines.text[*id as usize]);
                out.push('\n');
            }
            Block::Loop(n, body) => {
                out.push_str(&format!(
                    "{indent}for (long i{depth} = 0; i{depth} < {n}; i{depth}++) {{\n"
                ));
                render(body, lines, depth + 1, out);
                out.push_str(&indent);
                out.push_str("}\n");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_nested_repetition() {
        // a b b a b b c
        let seq = [0, 1, 1, 0, 1, 1, 2];
        let blocks = fold(&seq);
        assert_eq!(
            blocks,
            vec![
                Block::Loop(
                    2,
                    vec![Block::Line(0), Block::Loop(2, vec![Block::Line(1)])]
                ),
                Block::Line(2)
            ]
        );
    }
}
