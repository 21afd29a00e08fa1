//! Generating the proxy: every rank's calls turned into statements, the ranks' threads
//! grouped into behaviour classes by their grammars (or sharing the structure tree's code,
//! in tree mode), each class's code written ([`crate::rules`], [`crate::tree`]), and the
//! program put together ([`crate::source`]).

use crate::args::{Emitter, RankState};
use crate::lines::Lines;
use crate::objects::Objects;
use crate::options::{Compute, Options};
use crate::rules::{emit, ClassCode, Member};
use crate::source::{assemble, Behaviour, Program, RankCode, Startup};
use crate::tables::Tables;
use crate::threads::{frees, objects, place, FirstThread, Object};
use crate::tree::{emit_tree, TreeMember};
use conifer_compress::{FrozenGrammar, Grammar};
use conifer_spec::Function;
use conifer_trace::decode::{Call, CallReader};
use conifer_trace::forest::NO_TREE;
use conifer_trace::value::{Buffer, Value};
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A generated proxy application.
pub struct Proxy {
    /// `proxy.c`.
    pub source: String,
    /// `Makefile`, building `proxy` with the traced MPI's `mpicc`.
    pub makefile: String,
    /// What could not be reproduced, one line each with its number of calls.
    pub notes: Vec<String>,
    /// MPI calls in the trace (the heap events among its calls not counted).
    pub calls: u64,
    /// Behaviour classes: distinct grammars of the ranks' first threads.
    pub classes: usize,
    /// C functions generated for grammar rules.
    pub functions: usize,
    /// Numbers in the data tables.
    pub table_values: usize,
}

/// Generates the proxy of `trace`.
pub fn generate(trace: &Trace, options: &Options) -> Result<Proxy, String> {
    let functions: HashMap<String, Function> = conifer_spec::functions()
        .into_iter()
        .filter(|f| f.c)
        .map(|f| (f.name.clone(), f))
        .collect();
    let reader = trace.reader();
    let mut gen = Generation {
        functions,
        options: *options,
        objects: Objects::default(),
        notes: BTreeMap::new(),
        lines: Lines::default(),
        startup: None,
        calls: 0,
    };
    let empty = gen.lines.id(String::new());
    let mut ranks = Vec::new();
    for rank in 0..trace.meta.ranks {
        ranks.push(gen.rank(&reader, rank, empty)?);
    }
    // Behaviour classes: threads with the same grammar share its code; threads recorded
    // into trace trees share the structure tree's.
    let mut classes: Vec<(FrozenGrammar, Vec<(u32, usize)>)> = Vec::new();
    let mut class_of: HashMap<FrozenGrammar, usize> = HashMap::new();
    let mut in_trees: Vec<(u32, usize, u32)> = Vec::new();
    for (rank, threads) in ranks.iter().enumerate() {
        for (k, thread) in threads.threads.iter().enumerate() {
            if let Some(tree) = tree_of(trace, rank, k) {
                in_trees.push((rank as u32, k, tree));
                continue;
            }
            let grammar = thread_grammar(trace, rank, k, &thread.terminals);
            let next = classes.len();
            let c = *class_of.entry(grammar.clone()).or_insert(next);
            if c == next {
                classes.push((grammar, Vec::new()));
            }
            classes[c].1.push((rank as u32, k));
        }
    }
    let mut tables = Tables::default();
    let mut code = String::new();
    let mut jobs: Vec<Vec<(usize, Vec<u32>)>> = ranks
        .iter()
        .map(|r| vec![(0, Vec::new()); r.threads.len()])
        .collect();
    let mut columns = Vec::new();
    let mut entries = Vec::new();
    let mut function_count = 0;
    let mut add = |c: usize, class: ClassCode, members: &[(u32, usize)]| {
        code += &class.source;
        function_count += class.functions;
        columns.push(class.columns);
        entries.push(class.entry);
        for (&(rank, k), starts) in members.iter().zip(class.starts) {
            jobs[rank as usize][k] = (c, starts);
        }
    };
    for (c, (grammar, members)) in classes.iter().enumerate() {
        let list: Vec<Member> = members
            .iter()
            .map(|&(r, k)| Member {
                rank: r,
                terminals: &ranks[r as usize].threads[k].terminals,
                statements: &ranks[r as usize].threads[k].statements,
            })
            .collect();
        add(
            c,
            emit(c, grammar, &list, &gen.lines, &mut tables)?,
            members,
        );
    }
    if let (Some(forest), false) = (&trace.record.forest, in_trees.is_empty()) {
        let list: Vec<TreeMember> = in_trees
            .iter()
            .map(|&(r, k, tree)| TreeMember {
                rank: r,
                tree,
                terminals: &ranks[r as usize].threads[k].terminals,
                statements: &ranks[r as usize].threads[k].statements,
            })
            .collect();
        let c = classes.len();
        let class = emit_tree(c, forest, &list, &gen.lines, &mut tables)?;
        let members: Vec<(u32, usize)> = in_trees.iter().map(|&(r, k, _)| (r, k)).collect();
        add(c, class, &members);
    }
    let class_count = columns.len();
    let mut cases: BTreeMap<RankCode, Vec<u32>> = BTreeMap::new();
    for (rank, (jobs, threads)) in jobs.into_iter().zip(&ranks).enumerate() {
        cases
            .entry((jobs, threads.late_joins.clone()))
            .or_default()
            .push(rank as u32);
    }
    let behaviour = Behaviour {
        cases,
        columns,
        entries,
        classes: class_count,
        functions: function_count,
    };
    let source = assemble(&Program {
        trace,
        notes: &gen.notes,
        compute: gen.options.compute,
        objects: &gen.objects,
        startup: gen.startup.as_ref(),
        tables: &tables,
        code: &code,
        behaviour: &behaviour,
    });
    let mpi = &trace.meta.mpi;
    let mpicc = if mpi.is_empty() {
        "mpicc".to_string()
    } else {
        format!("mpicc.{mpi}")
    };
    let makefile = format!(
        "# Builds the proxy generated by conifer proxy.\nMPICC ?= {mpicc}\n\nproxy: proxy.c\n\t$(MPICC) -O0 -w -pthread -o proxy proxy.c\n\nclean:\n\trm -f proxy\n"
    );
    Ok(Proxy {
        source,
        makefile,
        notes: gen
            .notes
            .into_iter()
            .map(|(n, c)| format!("{n} ({c} calls)"))
            .collect(),
        calls: gen.calls,
        classes: behaviour.classes,
        functions: behaviour.functions,
        table_values: tables.len(),
    })
}

/// The trace tree of thread `thread` of `rank`, if it was recorded into one.
fn tree_of(trace: &Trace, rank: usize, thread: usize) -> Option<u32> {
    let tree = *trace.record.ranks[rank].trees.get(thread)?;
    (tree != NO_TREE && trace.record.forest.is_some()).then_some(tree)
}

/// The grammar the code of thread `thread` of `rank` follows, over the terminals of its calls
/// (`terminals`). The trace stores the recorder's grammar, whose terminals were renamed to
/// skeletons where values went to value streams, so repetitions the streams exposed (an
/// `MPI_Allreduce` whose offset moves every iteration) are still spelt out. So the calls'
/// terminals are compressed again by the recorder's Sequitur, and of the two grammars the one
/// with fewer right-hand-side items is followed.
fn thread_grammar(trace: &Trace, rank: usize, thread: usize, terminals: &[u32]) -> FrozenGrammar {
    let stored = trace.record.ranks[rank]
        .threads
        .get(thread)
        .and_then(|&g| trace.record.grammars.get(g as usize))
        .filter(|g| g.len() == terminals.len() as u64);
    let mut again = Grammar::new();
    terminals.iter().for_each(|&t| again.push(t));
    let again = again.freeze();
    match stored {
        Some(g) if g.item_count() <= again.item_count() => g.clone(),
        _ => again,
    }
}

/// A rank's threads, and those its first thread joins only when it is done.
struct RankThreads {
    threads: Vec<RankThread>,
    late_joins: Vec<usize>,
}

/// One thread of a rank: each call's terminal and statement.
#[derive(Default)]
struct RankThread {
    /// Whether it called `MPI_Init` or `MPI_Init_thread` yet (other threads start after).
    initialised: bool,
    /// The index of its call to `MPI_Init` or `MPI_Init_thread`.
    init: Option<usize>,
    terminals: Vec<u32>,
    statements: Vec<u32>,
}

/// What generation gathers over all ranks.
struct Generation {
    functions: HashMap<String, Function>,
    options: Options,
    objects: Objects,
    notes: BTreeMap<String, u64>,
    lines: Lines,
    startup: Option<Startup>,
    calls: u64,
}

impl Generation {
    fn note(&mut self, why: String) {
        *self.notes.entry(why).or_default() += 1;
    }

    /// Every thread of `rank`, its other threads started and joined by its first (see
    /// [`crate::threads`]).
    fn rank(&mut self, reader: &CallReader, rank: u32, empty: u32) -> Result<RankThreads, String> {
        let mut threads: Vec<RankThread> = Vec::new();
        let mut states: Vec<RankState> = Vec::new();
        let mut uses: Vec<HashSet<Object>> = Vec::new();
        let mut first = FirstThread::default();
        for call in reader.calls(rank) {
            let call = call.map_err(|e| e.to_string())?;
            self.calls += u64::from(call.name != "free");
            let k = call.signature.thread as usize;
            while threads.len() <= k {
                threads.push(RankThread {
                    initialised: !threads.is_empty(),
                    ..RankThread::default()
                });
                states.push(RankState::new(i64::from(reader.trace().meta.ranks)));
                uses.push(HashSet::new());
            }
            let index = threads[k].statements.len();
            let named = objects(&call);
            if k == 0 {
                for o in &named {
                    first.first_named.entry(*o).or_insert(index);
                }
                if frees(call.name) {
                    first.frees.push((index, named));
                } else if call.name == "MPI_Finalize" {
                    first.finalize = Some(index);
                }
            } else {
                uses[k].extend(named);
            }
            let text = self.statement(rank, &call, &mut states[k], &mut threads[k], empty);
            threads[k].terminals.push(call.terminal);
            threads[k].statements.push(text);
        }
        let mut late_joins = Vec::new();
        for k in 1..threads.len() {
            let placed = place(&first, &uses[k]);
            let spawn = placed.spawn.or(threads[0].init).unwrap_or(0);
            self.amend(
                &mut threads[0].statements,
                spawn,
                "",
                &format!(" spawn_({k});"),
            );
            match placed.join {
                Some(j) => self.amend(&mut threads[0].statements, j, &format!("join_({k}); "), ""),
                None => late_joins.push(k),
            }
            self.amend(
                &mut threads[k].statements,
                0,
                "",
                &format!(" started_[{k}] = 1;"),
            );
        }
        Ok(RankThreads {
            threads,
            late_joins,
        })
    }

    /// Puts `before` and `after` around statement `i` of `statements`.
    fn amend(&mut self, statements: &mut [u32], i: usize, before: &str, after: &str) {
        if let Some(s) = statements.get_mut(i) {
            let text = format!("{before}{}{after}", self.lines.text(*s));
            *s = self.lines.id(text.trim().to_string());
        }
    }

    /// The statement id of `call` of `rank` (the empty statement for calls the proxy makes
    /// elsewhere or cannot make). `MPI_Init` and the calls before it go to [`Startup`].
    fn statement(
        &mut self,
        rank: u32,
        call: &Call,
        state: &mut RankState,
        thread: &mut RankThread,
        empty: u32,
    ) -> u32 {
        if call.name == "free" {
            return match call.signature.values.first() {
                Some(Value::Buffer(Buffer::Segment { id, .. })) => {
                    match self.objects.segment_index(*id) {
                        Some(i) => self.lines.id(format!("seg_free({i});")),
                        None => empty,
                    }
                }
                _ => empty,
            };
        }
        let Some(function) = self.functions.get(call.name) else {
            self.note(format!("{}: not in the MPI function table", call.name));
            return empty;
        };
        let mut emitter = Emitter {
            objects: &mut self.objects,
            state,
            notes: Vec::new(),
        };
        let made = emitter.statement(call, function);
        for n in std::mem::take(&mut emitter.notes) {
            self.note(n);
        }
        let statement = match made {
            Ok(s) => s,
            Err(why) => {
                self.note(why);
                return empty;
            }
        };
        if !thread.initialised && matches!(call.name, "MPI_Init" | "MPI_Init_thread") {
            thread.initialised = true;
            thread.init = Some(thread.statements.len());
            let before: Vec<String> = thread
                .statements
                .iter_mut()
                .map(|s| self.lines.text(std::mem::replace(s, empty)).to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let this = Startup {
                before,
                init: statement,
            };
            match &self.startup {
                None => self.startup = Some(this),
                Some(first) if *first != this => self.note(format!(
                    "rank {rank}: its calls up to MPI_Init differ from rank 0's, which every rank makes"
                )),
                Some(_) => {}
            }
            return empty;
        }
        let compute = match self.options.compute {
            _ if !thread.initialised => 0,
            Compute::None => 0,
            // The call's own interval with lossless or lossy timing, else its family's mean.
            _ => quantised(call.time.map_or_else(
                || call.timing.map_or(0.0, |t| t.interval.mean()),
                |t| t.interval_ns as f64,
            )),
        };
        if compute > 0 {
            self.lines.id(format!("compute_ns({compute}); {statement}"))
        } else {
            self.lines.id(statement)
        }
    }
}

/// An interval in nanoseconds rounded to its three leading bits (within 12.5%, so that the
/// intervals of a call site repeat and their tables stay short).
fn quantised(ns: f64) -> u64 {
    if ns.is_nan() || ns < 0.5 {
        return 0;
    }
    let ns = ns.round() as u64;
    let shift = (64 - ns.leading_zeros()).saturating_sub(3);
    ((ns + (1 << shift >> 1)) >> shift) << shift
}

#[cfg(test)]
mod tests {
    use super::quantised;

    #[test]
    fn intervals_keep_three_leading_bits() {
        assert_eq!(quantised(0.4), 0);
        assert_eq!(quantised(5.0), 5);
        // 1000 = 0b1111101000: three leading bits 111 at 2^7, the rest rounds up.
        assert_eq!(quantised(1000.0), 1024);
        assert_eq!(quantised(900.0), 896);
        assert_eq!(quantised(f64::NAN), 0);
    }
}
