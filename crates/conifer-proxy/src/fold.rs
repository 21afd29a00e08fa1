//! Folding a rank's straight-line statements into `for` loops: the longest-covering run of
//! a repeated block of consecutive statements (up to [`MAX_PERIOD`] statements long) becomes
//! one loop, its body folded again. Blocks repeat when their statements are equal up to
//! integer literals that advance by the same step every repetition (an offset moving through
//! a buffer, a count growing): those become expressions of the loop variables, so the proxy
//! makes exactly the recorded values.

use std::collections::HashMap;

/// The longest block of statements a loop body is searched for.
pub const MAX_PERIOD: usize = 512;

/// An integer of a folded statement: `base + Σ steps[d] · i_d` over the loop variables of
/// the enclosing loops (`i0` outermost).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affine {
    base: i64,
    steps: Vec<i64>,
}

impl Affine {
    fn constant(base: i64) -> Affine {
        Affine {
            base,
            steps: Vec::new(),
        }
    }

    /// `other - self` when the two differ by a constant (their loop steps are equal).
    fn difference(&self, other: &Affine) -> Option<i64> {
        let depth = self.steps.len().max(other.steps.len());
        let step = |a: &Affine, k: usize| a.steps.get(k).copied().unwrap_or(0);
        (0..depth)
            .all(|k| step(self, k) == step(other, k))
            .then(|| other.base.checked_sub(self.base))
            .flatten()
    }

    /// Whether `other` is `self` advanced `times` times by `delta`.
    fn advances_to(&self, other: &Affine, delta: i64, times: i64) -> bool {
        self.difference(other)
            .is_some_and(|d| delta.checked_mul(times) == Some(d))
    }

    /// `self` with the loop variable at `depth` added, `delta` per iteration.
    fn with_loop(&self, depth: usize, delta: i64) -> Affine {
        let mut steps = self.steps.clone();
        steps.resize(steps.len().max(depth + 1), 0);
        steps[depth] = delta;
        Affine {
            base: self.base,
            steps,
        }
    }

    /// C source for the value.
    fn render(&self) -> String {
        let terms: Vec<String> = self
            .steps
            .iter()
            .enumerate()
            .filter(|(_, &s)| s != 0)
            .map(|(d, &s)| format!("{s}*i{d}"))
            .collect();
        if terms.is_empty() {
            self.base.to_string()
        } else {
            format!("({} + {})", self.base, terms.join(" + "))
        }
    }
}

/// A statement: the text around its integer literals (a template), and their values.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    template: u32,
    values: Vec<Affine>,
}

/// A folded statement sequence.
#[derive(Debug, PartialEq)]
pub enum Block {
    /// One statement.
    Line(Statement),
    /// A body repeated this many times.
    Loop(u64, Vec<Block>),
}

/// Interns statements so blocks compare as integers, and splits each into a template and
/// its integer literals.
#[derive(Default)]
pub struct Lines {
    ids: HashMap<String, u32>,
    /// The distinct statements, by id.
    pub text: Vec<String>,
    /// Per statement id, its template and literal values.
    split: Vec<(u32, Vec<i64>)>,
    template_ids: HashMap<Vec<String>, u32>,
    /// The distinct templates: the text pieces between literals.
    templates: Vec<Vec<String>>,
}

impl Lines {
    /// The id of `line`.
    pub fn id(&mut self, line: String) -> u32 {
        if let Some(&id) = self.ids.get(&line) {
            return id;
        }
        let id = self.text.len() as u32;
        let (pieces, values) = literals(&line);
        let next = self.templates.len() as u32;
        let template = *self.template_ids.entry(pieces.clone()).or_insert(next);
        if template == next {
            self.templates.push(pieces);
        }
        self.split.push((template, values));
        self.text.push(line.clone());
        self.ids.insert(line, id);
        id
    }

    fn statement(&self, id: u32) -> Statement {
        let (template, values) = &self.split[id as usize];
        Statement {
            template: *template,
            values: values.iter().map(|&v| Affine::constant(v)).collect(),
        }
    }
}

/// Splits a C statement at its integer literals: decimal digit runs outside string literals
/// that are not part of a name or of a floating-point or hexadecimal number. Returns the text
/// pieces (one more than the values) and the values.
fn literals(line: &str) -> (Vec<String>, Vec<i64>) {
    let bytes = line.as_bytes();
    let (mut pieces, mut values) = (Vec::new(), Vec::new());
    let (mut start, mut i, mut quoted) = (0, 0, false);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' && (i == 0 || bytes[i - 1] != b'\\') {
            quoted = !quoted;
        }
        if quoted || !b.is_ascii_digit() || (i > 0 && word(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let end = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        let value = line[i..end].parse::<i64>();
        match value {
            Ok(v) if end == bytes.len() || !word(bytes[end]) => {
                pieces.push(line[start..i].to_string());
                values.push(v);
                start = end;
            }
            _ => {}
        }
        i = end;
    }
    pieces.push(line[start..].to_string());
    (pieces, values)
}

/// Folds the statements `seq` (ids in `lines`) into loops.
pub fn fold(seq: &[u32], lines: &Lines) -> Vec<Block> {
    let statements: Vec<Statement> = seq.iter().map(|&id| lines.statement(id)).collect();
    fold_at(&statements, 0)
}

/// The per-statement difference of the values between the block of `p` statements at
/// `first` and the next one, when their templates agree.
fn deltas(items: &[Statement], first: usize, p: usize) -> Option<Vec<Vec<i64>>> {
    let block = &items[first..first + p];
    let next = &items[first + p..first + 2 * p];
    block
        .iter()
        .zip(next)
        .map(|(a, b)| {
            if a.template != b.template {
                return None;
            }
            a.values
                .iter()
                .zip(&b.values)
                .map(|(x, y)| x.difference(y))
                .collect()
        })
        .collect()
}

/// Whether repetition `r` of the block of `p` statements at `first` is the first advanced
/// `r` times by `deltas`.
fn is_repetition(
    items: &[Statement],
    first: usize,
    p: usize,
    r: usize,
    deltas: &[Vec<i64>],
) -> bool {
    let block = &items[first..first + p];
    let rep = &items[first + r * p..first + (r + 1) * p];
    block.iter().zip(rep).zip(deltas).all(|((a, b), delta)| {
        a.template == b.template
            && a.values
                .iter()
                .zip(&b.values)
                .zip(delta)
                .all(|((x, y), &d)| x.advances_to(y, d, r as i64))
    })
}

/// How the block of `p` statements at `first` repeats: the number of repetitions and the
/// per-repetition differences, when it repeats often enough to become a loop (twice when
/// the repetitions are equal, three times when values advance: a loop must be shorter than
/// what it replaces).
fn run(items: &[Statement], first: usize, p: usize) -> Option<(usize, Vec<Vec<i64>>)> {
    let deltas = deltas(items, first, p)?;
    let mut reps = 2;
    while first + (reps + 1) * p <= items.len() && is_repetition(items, first, p, reps, &deltas) {
        reps += 1;
    }
    let advancing = deltas.iter().flatten().any(|&d| d != 0);
    (reps >= if advancing { 3 } else { 2 }).then_some((reps, deltas))
}

fn fold_at(items: &[Statement], depth: usize) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut best: Option<(usize, usize, Vec<Vec<i64>>)> = None;
        for p in 1..=MAX_PERIOD.min((items.len() - i) / 2) {
            if let Some((reps, deltas)) = run(items, i, p) {
                if best.as_ref().is_none_or(|(bp, br, _)| reps * p > bp * br) {
                    best = Some((p, reps, deltas));
                }
            }
        }
        let folded = best.map(|(p, reps, deltas)| {
            let body: Vec<Statement> = items[i..i + p]
                .iter()
                .zip(&deltas)
                .map(|(s, delta)| Statement {
                    template: s.template,
                    values: s
                        .values
                        .iter()
                        .zip(delta)
                        .map(|(v, &d)| v.with_loop(depth, d))
                        .collect(),
                })
                .collect();
            (p, reps, body)
        });
        match folded {
            Some((p, reps, body)) => {
                out.push(Block::Loop(reps as u64, fold_at(&body, depth + 1)));
                i += reps * p;
            }
            None => {
                out.push(Block::Line(items[i].clone()));
                i += 1;
            }
        }
    }
    out
}

/// Writes blocks as C at nesting `depth` (loop variables `i0`, `i1`, ...).
pub fn render(blocks: &[Block], lines: &Lines, depth: usize, out: &mut String) {
    let indent = "    ".repeat(depth + 1);
    for b in blocks {
        match b {
            Block::Line(statement) => {
                let pieces = &lines.templates[statement.template as usize];
                out.push_str(&indent);
                out.push_str(&pieces[0]);
                for (value, piece) in statement.values.iter().zip(&pieces[1..]) {
                    out.push_str(&value.render());
                    out.push_str(piece);
                }
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

    fn folded(statements: &[&str]) -> String {
        let mut lines = Lines::default();
        let seq: Vec<u32> = statements.iter().map(|s| lines.id(s.to_string())).collect();
        let mut out = String::new();
        render(&fold(&seq, &lines), &lines, 0, &mut out);
        out
    }

    #[test]
    fn folds_nested_repetition() {
        let out = folded(&["a();", "b();", "b();", "a();", "b();", "b();", "c();"]);
        assert_eq!(
            out,
            "    for (long i0 = 0; i0 < 2; i0++) {\n        a();\n        \
             for (long i1 = 0; i1 < 2; i1++) {\n            b();\n        }\n    }\n    c();\n"
        );
    }

    #[test]
    fn literals_advancing_by_a_step_become_loop_expressions() {
        let out = folded(&[
            "f(B(8)+0, 3);",
            "g(2);",
            "f(B(8)+8, 3);",
            "g(2);",
            "f(B(8)+16, 3);",
            "g(2);",
        ]);
        assert_eq!(
            out,
            "    for (long i0 = 0; i0 < 3; i0++) {\n        f(B(8)+(0 + 8*i0), 3);\n        \
             g(2);\n    }\n"
        );
    }

    #[test]
    fn nested_loops_step_in_both_variables() {
        // f(10*row + col) over rows 0..3, cols 0..3
        let calls: Vec<String> = (0..3)
            .flat_map(|r| (0..3).map(move |c| format!("f({});", 10 * r + c)))
            .collect();
        let refs: Vec<&str> = calls.iter().map(String::as_str).collect();
        let out = folded(&refs);
        assert_eq!(
            out,
            "    for (long i0 = 0; i0 < 3; i0++) {\n        \
             for (long i1 = 0; i1 < 3; i1++) {\n            f((0 + 10*i0 + 1*i1));\n        }\n    }\n"
        );
    }

    #[test]
    fn irregular_values_and_non_integers_stay_as_they_are() {
        let out = folded(&["f(1);", "f(2);", "f(4);", "h(1.5, \"k1\", 0x10, MPI_2INT);"]);
        assert_eq!(
            out,
            "    f(1);\n    f(2);\n    f(4);\n    h(1.5, \"k1\", 0x10, MPI_2INT);\n"
        );
        let (pieces, values) = literals("h(1.5, \"k1\", 0x10, MPI_2INT, -3);");
        assert_eq!(values, vec![3]);
        assert_eq!(pieces, vec!["h(1.5, \"k1\", 0x10, MPI_2INT, -", ");"]);
    }
}
