//! Tree-mode code (CYPRESS): the threads recorded into trace trees share one C function per
//! loop or branch vertex of the structure tree (and the root). A vertex's function visits its
//! children in program order, each as often as the thread activated it per activation of
//! the vertex — a constant, or read from a data table — a call site as its statement (see
//! [`crate::rules::site_statement`]), followed by the calls the tree did not hold that came
//! after it (all of a thread's such calls are one more site).

use crate::lines::Lines;
use crate::rules::{column, site_statement, ClassCode};
use crate::tables::Tables;
use conifer_compress::tree::{Shape, VertexKind};
use conifer_trace::forest::Forest;

/// A thread with a trace tree: its world rank, its tree, and its calls' terminals and
/// statement ids in call order.
pub struct TreeMember<'a> {
    /// World rank.
    pub rank: u32,
    /// Its tree in the forest.
    pub tree: u32,
    /// Each call's terminal.
    pub terminals: &'a [u32],
    /// Each call's statement.
    pub statements: &'a [u32],
}

/// What one thread's walk of its tree met, per vertex.
#[derive(Default)]
struct Walked {
    /// Per vertex, its activations per activation of its parent, in walk order.
    counts: Vec<Vec<i64>>,
    /// Per call site, the statements of its calls.
    calls: Vec<Vec<u32>>,
    /// Per call site, how many calls outside the tree followed each of its calls.
    after: Vec<Vec<i64>>,
    /// The statements of the calls outside the tree, in call order.
    outside: Vec<u32>,
}

/// Writes the code of class `class`: the threads `members`, all over `forest`'s structure.
pub fn emit_tree(
    class: usize,
    forest: &Forest,
    members: &[TreeMember],
    lines: &Lines,
    tables: &mut Tables,
) -> Result<ClassCode, String> {
    let shape: &Shape = &forest.structure.shape;
    let n = shape.len();
    let walks: Vec<Walked> = members
        .iter()
        .map(|m| walk(forest, m))
        .collect::<Result<_, _>>()?;
    let first = tables.columns();
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); members.len()];
    let leading: Vec<Vec<i64>> = members
        .iter()
        .map(|m| vec![forest.trees[m.tree as usize].leading_foreign as i64])
        .collect();
    let per = |f: &dyn Fn(&Walked) -> &Vec<i64>| -> Vec<Vec<i64>> {
        walks.iter().map(|w| f(w).clone()).collect()
    };
    let outside: Vec<Vec<u32>> = walks.iter().map(|w| w.outside.clone()).collect();
    let outside = site_statement(&outside, lines, tables, &mut starts);
    let mut functions = Vec::new();
    for v in (0..n as u32).filter(|&v| shape.kind(v) != VertexKind::Site) {
        let mut body = String::new();
        if v == 0 {
            let times = count(&leading, tables, &mut starts);
            body += &repeat(times.as_deref(), "f", &outside);
        }
        for &c in shape.children(v) {
            let counts = per(&|w| &w.counts[c as usize]);
            let Some(times) = count(&counts, tables, &mut starts) else {
                continue;
            };
            let text = if shape.kind(c) == VertexKind::Site {
                let calls: Vec<Vec<u32>> =
                    walks.iter().map(|w| w.calls[c as usize].clone()).collect();
                let call = site_statement(&calls, lines, tables, &mut starts);
                let after = per(&|w| &w.after[c as usize]);
                let then = count(&after, tables, &mut starts);
                format!("{call} {}", repeat(then.as_deref(), "f", &outside).trim())
                    .trim()
                    .to_string()
            } else {
                format!("c{class}_v{c}();")
            };
            body += &repeat(Some(&times), "i", &text);
        }
        if v == 0
            || walks
                .iter()
                .any(|w| w.counts[v as usize].iter().any(|&k| k > 0))
        {
            functions.push(format!("\nstatic void c{class}_v{v}(void) {{\n{body}}}\n"));
        }
    }
    let count_functions = functions.len();
    // Children after parents in pre-order: write them callees first.
    functions.reverse();
    Ok(ClassCode {
        source: functions.concat(),
        entry: format!("c{class}_v0"),
        functions: count_functions,
        columns: (first, tables.columns() - first),
        starts,
    })
}

/// How many times something happens, as C, from each member's sequence of times `per`:
/// `None` when never (nothing but zeros), a constant, or `nx(column)` reading a new column.
fn count(per: &[Vec<i64>], tables: &mut Tables, starts: &mut [Vec<u32>]) -> Option<String> {
    let mut all = per.iter().flatten();
    let first = *all.next()?;
    if all.all(|&k| k == first) {
        return (first > 0).then(|| first.to_string());
    }
    Some(format!("nx({})", column(per, tables, starts)))
}

/// `text` made `times` times (nothing for `None`), as a line of C.
fn repeat(times: Option<&str>, var: &str, text: &str) -> String {
    match times {
        None => String::new(),
        _ if text.is_empty() => String::new(),
        Some("1") => format!("    {text}\n"),
        Some(t) => format!("    for (long {var} = {t}; {var} > 0; {var}--) {{ {text} }}\n"),
    }
}

/// Walks `member`'s tree as decoding does, matching its calls in order.
fn walk(forest: &Forest, member: &TreeMember) -> Result<Walked, String> {
    let shape = &forest.structure.shape;
    let records = forest.records(member.tree);
    let n = shape.len();
    let mut w = Walked {
        counts: vec![Vec::new(); n],
        calls: vec![Vec::new(); n],
        after: vec![Vec::new(); n],
        outside: Vec::new(),
    };
    let mut state = WalkState {
        shape,
        counts: records.iter().map(|r| r.counts.iter()).collect(),
        terminals: records.iter().map(|r| r.terminals.iter()).collect(),
        after: records.iter().map(|r| r.foreign.iter()).collect(),
        member,
        next: 0,
    };
    let leading = forest.trees[member.tree as usize].leading_foreign;
    state.outside(leading, &mut w)?;
    state.activation(0, &mut w)?;
    if state.next != member.statements.len() {
        return Err(format!(
            "rank {}: its trace tree holds {} of its {} calls",
            member.rank,
            state.next,
            member.statements.len()
        ));
    }
    Ok(w)
}

/// The position of a walk in each vertex's series and in the member's calls.
struct WalkState<'a, 'b> {
    shape: &'a Shape,
    counts: Vec<conifer_compress::tree::SeriesIter<'a>>,
    terminals: Vec<conifer_compress::tree::SeriesIter<'a>>,
    after: Vec<conifer_compress::tree::SeriesIter<'a>>,
    member: &'a TreeMember<'b>,
    next: usize,
}

impl WalkState<'_, '_> {
    fn broken(&self) -> String {
        format!(
            "rank {}: call {} does not follow its trace tree",
            self.member.rank, self.next
        )
    }

    /// One activation of vertex `v`.
    fn activation(&mut self, v: u32, w: &mut Walked) -> Result<(), String> {
        for &c in self.shape.children(v) {
            let times = self.counts[c as usize]
                .next()
                .ok_or_else(|| self.broken())?;
            w.counts[c as usize].push(times as i64);
            for _ in 0..times {
                if self.shape.kind(c) != VertexKind::Site {
                    self.activation(c, w)?;
                    continue;
                }
                let terminal = self.terminals[c as usize].next();
                let at = self.next;
                if terminal.is_none()
                    || terminal != self.member.terminals.get(at).map(|&t| u64::from(t))
                {
                    return Err(self.broken());
                }
                w.calls[c as usize].push(self.member.statements[at]);
                self.next += 1;
                let after = self.after[c as usize].next().ok_or_else(|| self.broken())?;
                w.after[c as usize].push(after as i64);
                self.outside(after, w)?;
            }
        }
        Ok(())
    }

    /// The next `k` calls, outside the tree.
    fn outside(&mut self, k: u64, w: &mut Walked) -> Result<(), String> {
        for _ in 0..k {
            let s = *self
                .member
                .statements
                .get(self.next)
                .ok_or_else(|| self.broken())?;
            w.outside.push(s);
            self.next += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_skipped_constant_or_read_from_a_column() {
        let mut tables = Tables::default();
        let mut starts = vec![Vec::new(), Vec::new()];
        assert_eq!(count(&[vec![0, 0], vec![]], &mut tables, &mut starts), None);
        assert_eq!(
            count(&[vec![4, 4], vec![4]], &mut tables, &mut starts),
            Some("4".into())
        );
        assert_eq!(
            count(&[vec![1, 2], vec![2]], &mut tables, &mut starts),
            Some("nx(0)".into())
        );
        assert_eq!(starts, vec![vec![0], vec![3]]);
    }

    #[test]
    fn repetition_is_a_counted_loop() {
        assert_eq!(repeat(None, "i", "f();"), "");
        assert_eq!(repeat(Some("1"), "i", "f();"), "    f();\n");
        assert_eq!(
            repeat(Some("nx(2)"), "i", "f();"),
            "    for (long i = nx(2); i > 0; i--) { f(); }\n"
        );
        assert_eq!(repeat(Some("3"), "i", ""), "");
    }
}
