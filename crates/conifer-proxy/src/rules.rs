//! One behaviour class's code: a C function per rule of the class's grammar, a loop for
//! every exponent above one, and for each terminal of a rule (a call site of the grammar)
//! one statement made of what its calls share, every varying number read from a data table
//! and, where the calls' statements differ in more than numbers, a `switch` on a table
//! column choosing among them.

use crate::lines::Lines;
use crate::tables::Tables;
use conifer_compress::{FrozenGrammar, Item, Symbol};

/// A rank of the class: its world rank, and its calls' terminals and statement ids, in the
/// order the grammar expands to.
pub struct Member<'a> {
    /// World rank.
    pub rank: u32,
    /// Each call's terminal.
    pub terminals: &'a [u32],
    /// Each call's statement (an id in [`Lines`]; empty text for calls the proxy leaves out).
    pub statements: &'a [u32],
}

/// The class's generated code.
pub struct ClassCode {
    /// The functions, callees before their callers.
    pub source: String,
    /// The function a thread of the class runs.
    pub entry: String,
    /// Functions written.
    pub functions: usize,
    /// The class's first column and how many it has.
    pub columns: (u32, u32),
    /// Per member (in the order given), where each of the class's columns starts in the pool.
    pub starts: Vec<Vec<u32>>,
}

/// Writes the code of class `class` with grammar `grammar` for `members`.
pub fn emit(
    class: usize,
    grammar: &FrozenGrammar,
    members: &[Member],
    lines: &Lines,
    tables: &mut Tables,
) -> Result<ClassCode, String> {
    let rules = grammar.rules();
    // Sites: the terminal items of the rules, numbered rule by rule.
    let mut site_of: Vec<Vec<usize>> = Vec::with_capacity(rules.len());
    let mut sites = 0;
    for rule in rules {
        site_of.push(
            rule.iter()
                .map(|item| {
                    sites += usize::from(matches!(item.symbol, Symbol::Terminal(_)));
                    sites.wrapping_sub(1)
                })
                .collect(),
        );
    }
    // Per site, per member, its statements in call order.
    let mut occurrences: Vec<Vec<Vec<u32>>> = vec![vec![Vec::new(); members.len()]; sites];
    for (m, member) in members.iter().enumerate() {
        if member.terminals.len() as u64 != grammar.len() {
            return Err(format!(
                "rank {}: {} calls, its grammar expands to {}",
                member.rank,
                member.terminals.len(),
                grammar.len()
            ));
        }
        let mut walk = Walk {
            rules,
            site_of: &site_of,
            member,
            next: 0,
            occurrences: &mut occurrences,
            m,
        };
        walk.rule(0)?;
    }
    let first = tables.columns();
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); members.len()];
    let mut texts = Vec::with_capacity(sites);
    for per_member in &occurrences {
        texts.push(site_statement(per_member, lines, tables, &mut starts));
    }
    let mut source = String::new();
    for r in callees_first(rules) {
        let rule = &rules[r];
        source += &format!("\nstatic void c{class}_r{r}(void) {{\n");
        for (i, item) in rule.iter().enumerate() {
            let text = match item.symbol {
                Symbol::Terminal(_) => texts[site_of[r][i]].clone(),
                Symbol::Rule(q) => format!("c{class}_r{q}();"),
            };
            if text.is_empty() {
                continue;
            }
            if item.exponent == 1 {
                source += &format!("    {text}\n");
            } else {
                source += &format!(
                    "    for (long i = 0; i < {}; i++) {{ {text} }}\n",
                    item.exponent
                );
            }
        }
        source += "}\n";
    }
    Ok(ClassCode {
        source,
        entry: format!("c{class}_r0"),
        functions: rules.len(),
        columns: (first, tables.columns() - first),
        starts,
    })
}

/// The rules reachable from rule 0, each after every rule it calls (post-order of a
/// depth-first walk; a grammar is acyclic).
fn callees_first(rules: &[Vec<Item>]) -> Vec<usize> {
    let mut seen = vec![false; rules.len()];
    let mut order = Vec::with_capacity(rules.len());
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((r, next)) = stack.pop() {
        let child = rules[r][next..]
            .iter()
            .position(|item| matches!(item.symbol, Symbol::Rule(q) if !seen[q as usize]));
        match child {
            Some(k) => {
                let Symbol::Rule(q) = rules[r][next + k].symbol else {
                    continue;
                };
                seen[q as usize] = true;
                stack.push((r, next + k + 1));
                stack.push((q as usize, 0));
            }
            None => order.push(r),
        }
    }
    order
}

/// Expands a member's grammar, handing each call's statement to its site.
struct Walk<'a, 'b> {
    rules: &'a [Vec<Item>],
    site_of: &'a [Vec<usize>],
    member: &'a Member<'b>,
    next: usize,
    occurrences: &'a mut [Vec<Vec<u32>>],
    m: usize,
}

impl Walk<'_, '_> {
    fn rule(&mut self, r: usize) -> Result<(), String> {
        for (i, item) in self.rules[r].iter().enumerate() {
            for _ in 0..item.exponent {
                match item.symbol {
                    Symbol::Terminal(t) => {
                        let at = self.next;
                        if self.member.terminals.get(at) != Some(&t) {
                            return Err(format!(
                                "rank {}: call {at} is not the terminal its grammar expands to",
                                self.member.rank
                            ));
                        }
                        self.occurrences[self.site_of[r][i]][self.m]
                            .push(self.member.statements[at]);
                        self.next += 1;
                    }
                    Symbol::Rule(q) => self.rule(q as usize)?,
                }
            }
        }
        Ok(())
    }
}

/// A new column of `tables` whose values are `per` member's sequence; where each member's
/// sequence starts goes to `starts`.
pub fn column(per: &[Vec<i64>], tables: &mut Tables, starts: &mut [Vec<u32>]) -> u32 {
    let c = tables.column();
    for (m, values) in per.iter().enumerate() {
        starts[m].push(tables.sequence(values));
    }
    c
}

/// The C statement of one site whose calls made the statements `per_member` (per member, in
/// call order): the text they share, varying numbers as `nx(column)`, a `switch` on a column
/// where their templates differ. New columns' sequences go to `tables`, where each member's
/// starts to `starts`.
pub fn site_statement(
    per_member: &[Vec<u32>],
    lines: &Lines,
    tables: &mut Tables,
    starts: &mut [Vec<u32>],
) -> String {
    let all = || per_member.iter().flatten().copied();
    let Some(first) = all().next() else {
        return String::new();
    };
    if all().all(|s| s == first) {
        return lines.text(first).to_string();
    }
    let mut variants: Vec<u32> = Vec::new();
    for s in all() {
        let t = lines.template(s);
        if !variants.contains(&t) {
            variants.push(t);
        }
    }
    let mut new_column = |per: Vec<Vec<i64>>, tables: &mut Tables| column(&per, tables, starts);
    let mut rendered = Vec::new();
    for &v in &variants {
        let pieces = lines.pieces(v);
        let mut text = pieces[0].clone();
        for (j, piece) in pieces[1..].iter().enumerate() {
            let per: Vec<Vec<i64>> = per_member
                .iter()
                .map(|ids| {
                    ids.iter()
                        .filter(|&&s| lines.template(s) == v)
                        .map(|&s| lines.values(s)[j])
                        .collect()
                })
                .collect();
            let mut values = per.iter().flatten();
            let constant = values.next().copied();
            if values.all(|&x| Some(x) == constant) {
                text += &constant.unwrap_or(0).to_string();
            } else {
                text += &format!("nx({})", new_column(per, tables));
            }
            text += piece;
        }
        rendered.push(text);
    }
    if rendered.len() == 1 {
        return rendered.pop().unwrap_or_default();
    }
    let per: Vec<Vec<i64>> = per_member
        .iter()
        .map(|ids| {
            ids.iter()
                .map(|&s| {
                    variants
                        .iter()
                        .position(|&v| v == lines.template(s))
                        .unwrap_or(0) as i64
                })
                .collect()
        })
        .collect();
    let selector = new_column(per, tables);
    let cases: Vec<String> = rendered
        .iter()
        .enumerate()
        .map(|(k, text)| format!("case {k}: {text} break;"))
        .collect();
    format!("switch (nx({selector})) {{ {} }}", cases.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_compress::Grammar;

    /// The code of one class whose members called `calls` (terminal, statement) each.
    fn code(calls: &[Vec<(u32, &str)>]) -> (ClassCode, Tables) {
        let mut lines = Lines::default();
        let mut g = Grammar::new();
        calls[0].iter().for_each(|&(t, _)| g.push(t));
        let grammar = g.freeze();
        let threads: Vec<(Vec<u32>, Vec<u32>)> = calls
            .iter()
            .map(|c| {
                let t = c.iter().map(|&(t, _)| t).collect();
                let s = c.iter().map(|&(_, s)| lines.id(s.to_string())).collect();
                (t, s)
            })
            .collect();
        let members: Vec<Member> = threads
            .iter()
            .enumerate()
            .map(|(r, (t, s))| Member {
                rank: r as u32,
                terminals: t,
                statements: s,
            })
            .collect();
        let mut tables = Tables::default();
        let class = emit(0, &grammar, &members, &lines, &mut tables).unwrap();
        (class, tables)
    }

    #[test]
    fn repetition_is_a_loop_and_stepped_values_one_run() {
        let calls = vec![vec![
            (1, "f(0);"),
            (2, "g();"),
            (1, "f(8);"),
            (2, "g();"),
            (1, "f(16);"),
            (2, "g();"),
        ]];
        let (class, tables) = code(&calls);
        assert!(
            class
                .source
                .contains("for (long i = 0; i < 3; i++) { c0_r1(); }"),
            "{}",
            class.source
        );
        assert!(
            class.source.contains("    f(nx(0));\n    g();\n"),
            "{}",
            class.source
        );
        assert_eq!(class.columns, (0, 1));
        assert!(tables.declarations().contains("\n3,8,0,\n"));
        assert_eq!(class.starts, vec![vec![0]]);
    }

    #[test]
    fn members_differing_in_a_number_share_code_with_their_own_table() {
        let calls = vec![
            vec![(1, "s(1);"), (2, "h();")],
            vec![(1, "s(3);"), (2, "h();")],
        ];
        let (class, tables) = code(&calls);
        assert!(
            class.source.contains("    s(nx(0));\n    h();\n"),
            "{}",
            class.source
        );
        assert_eq!(class.starts, vec![vec![0], vec![2]]);
        assert!(tables.declarations().contains("\n-1,1,-1,3,\n"));
    }

    #[test]
    fn statements_of_other_shapes_are_chosen_by_a_column() {
        let calls = vec![vec![(1, "a(1);"), (1, "b(1);"), (1, "a(1);")]];
        let (class, tables) = code(&calls);
        assert!(
            class
                .source
                .contains("switch (nx(0)) { case 0: a(1); break; case 1: b(1); break; }"),
            "{}",
            class.source
        );
        assert!(tables.declarations().contains("\n-3,0,1,0,\n"));
    }
}
