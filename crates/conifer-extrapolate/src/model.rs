//! Fitting a classing: every class's ranks, at every input P, must make the same calls in the
//! same order; each field that differs among them is fitted (see [`crate::fit`]). What cannot
//! be fitted is reported one line per call site.

use crate::classing::{ClassKey, Classing};
use crate::fit::{fit, Form, Sample};
use crate::samples::{Items, Run, Shape};
use conifer_compress::fast_hash::FastMap;
use std::collections::BTreeSet;

/// A call site (or communicator list) of a class with its fields fitted.
pub struct Fitted {
    /// Its shape in [`Items::shapes`].
    pub shape: u32,
    /// Per leaf, the forms that fit, preferred first (several when the inputs cannot tell
    /// them apart: [`crate::build`] refuses where they disagree).
    pub forms: Vec<Vec<Form>>,
    /// Per leaf, the call site and field it is ("MPI_Isend dest (call 7 of thread 0)").
    pub labels: Vec<String>,
}

/// What the ranks of one class do.
pub struct ClassModel {
    /// Per thread, its calls as indices into [`Model::fitted`].
    pub threads: Vec<Vec<u32>>,
    /// Its communicators, an index into [`Model::fitted`].
    pub comms: u32,
    /// Per thread and call, (interval, duration) in ns from the class's first rank in the
    /// largest input.
    pub times: Vec<Vec<(f64, f64)>>,
}

/// A classing whose every call site fits.
pub struct Model {
    /// The classing.
    pub classing: Classing,
    /// Per class, what its ranks do.
    pub classes: FastMap<ClassKey, ClassModel>,
    /// The fitted call sites and communicator lists.
    pub fitted: Vec<Fitted>,
    /// The fields found to vary with the run, one line each ("MPI_Isend dest = -cols").
    pub varying: BTreeSet<String>,
}

/// Why a classing does not fit.
pub struct Unfitted {
    /// Classes with a call site that does not fit.
    pub failed: usize,
    /// Classes in all.
    pub classes: usize,
    /// One line per call site that does not fit.
    pub sites: Vec<String>,
}

impl Unfitted {
    /// The share of classes that fit (what "closest" means when every classing fails).
    pub fn fitting_share(&self) -> f64 {
        (self.classes - self.failed) as f64 / self.classes.max(1) as f64
    }
}

/// Forms established for a leaf of a shape (shape, leaf index) where it was seen at three
/// values or more: a class seen at fewer P (the interior of a grid exists only from 3 × 3
/// on) may take one of them when it fits every sample there.
pub type Hints = FastMap<(u32, usize), Vec<Form>>;

/// Names of functions by catalog id, with their slot names.
pub type Names = FastMap<u16, (String, Vec<String>)>;

/// One member of a class: (input, rank, features).
type Member = (usize, usize, Vec<Option<i64>>);

struct Fitter<'a> {
    items: &'a Items,
    runs: &'a [Run],
    names: &'a Names,
    classing: Classing,
    fitted: Vec<Fitted>,
    cache: FastMap<Vec<u32>, u32>,
    varying: BTreeSet<String>,
    /// Per call site: why it does not fit (as first seen) and the classes where it does not.
    problems: std::collections::BTreeMap<String, (String, Vec<String>)>,
    hints: &'a Hints,
    found: Hints,
    groups: Vec<Vec<usize>>,
}

/// Fits `runs` (ascending P) under `classing`, leaves seen at fewer than three values taking
/// a form of `hints` where one fits: the model, or one line per call site that cannot be
/// fitted; and the forms established on the way (hints for another pass).
pub fn fit_model(
    items: &Items,
    runs: &[Run],
    names: &Names,
    classing: Classing,
    hints: &Hints,
) -> (Result<Model, Unfitted>, Hints) {
    let mut members: FastMap<ClassKey, Vec<Member>> = FastMap::default();
    for (i, run) in runs.iter().enumerate() {
        for r in 0..run.ranks.len() {
            let (key, features) = classing.classify(run.p, r as i64);
            members.entry(key).or_default().push((i, r, features));
        }
    }
    let mut f = Fitter {
        items,
        runs,
        names,
        classing,
        fitted: Vec::new(),
        cache: FastMap::default(),
        varying: BTreeSet::new(),
        problems: Default::default(),
        hints,
        found: Hints::default(),
        groups: classing.feature_groups(grid_dims(items)),
    };
    let mut keys: Vec<&ClassKey> = members.keys().collect();
    keys.sort();
    let total = keys.len();
    let mut classes = FastMap::default();
    for key in keys {
        if let Some(model) = f.class(key, &members[key]) {
            classes.insert(key.clone(), model);
        }
    }
    if !f.problems.is_empty() {
        let unfitted = Unfitted {
            failed: total - classes.len(),
            classes: total,
            sites: f
                .problems
                .into_iter()
                .map(|(site, (why, classes))| {
                    let more = match classes.len() {
                        1 => String::new(),
                        n => format!(" and {} more rank classes", n - 1),
                    };
                    format!("{site}: {why} ({}{more})", classes[0])
                })
                .collect(),
        };
        return (Err(unfitted), f.found);
    }
    let model = Model {
        classing,
        classes,
        fitted: f.fitted,
        varying: f.varying,
    };
    (Ok(model), f.found)
}

/// The most dimensions of any Cartesian communicator of the inputs (0 without one).
fn grid_dims(items: &Items) -> usize {
    items
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Comms(comms) => comms
                .iter()
                .filter_map(|m| m.grid.as_ref())
                .map(|g| g.dims.len())
                .max(),
            Shape::Call(_) => None,
        })
        .max()
        .unwrap_or(0)
}

impl Fitter<'_> {
    fn function(&self, shape: u32) -> String {
        match &self.items.shapes[shape as usize] {
            Shape::Call(s) => self
                .names
                .get(&s.function)
                .map_or_else(|| format!("function #{}", s.function), |n| n.0.clone()),
            Shape::Comms(_) => "the communicators".into(),
        }
    }

    fn problem(&mut self, site: String, class: &str, why: String) {
        let entry = self.problems.entry(site).or_insert((why, Vec::new()));
        entry.1.push(class.to_string());
    }

    fn at(&self, m: &Member) -> String {
        format!("P={} rank {}", self.runs[m.0].p, m.1)
    }

    fn class(&mut self, key: &ClassKey, members: &[Member]) -> Option<ClassModel> {
        let class = self.classing.describe(key);
        self.cache.clear();
        let reference = members
            .iter()
            .max_by_key(|m| (self.runs[m.0].p, std::cmp::Reverse(m.1)))?;
        let seqs = |m: &Member| &self.runs[m.0].ranks[m.1].threads;
        let threads = seqs(reference).len();
        if let Some(m) = members.iter().find(|m| seqs(m).len() != threads) {
            let why = format!(
                "{} has {} threads but {} has {threads}",
                self.at(m),
                seqs(m).len(),
                self.at(reference)
            );
            self.problem("threads".into(), &class, why);
            return None;
        }
        let mut out = Vec::with_capacity(threads);
        for t in 0..threads {
            out.push(self.thread(&class, members, reference, t)?);
        }
        let comms: Vec<u32> = members
            .iter()
            .map(|m| self.runs[m.0].ranks[m.1].comms)
            .collect();
        let comms = self.site(&class, members, &comms, "communicators".into())?;
        let rank = &self.runs[reference.0].ranks[reference.1];
        Some(ClassModel {
            threads: out,
            comms,
            times: rank.times.clone(),
        })
    }

    fn thread(
        &mut self,
        class: &str,
        members: &[Member],
        reference: &Member,
        t: usize,
    ) -> Option<Vec<u32>> {
        let seq = |m: &Member| &self.runs[m.0].ranks[m.1].threads[t];
        let len = seq(reference).len();
        for m in members {
            let (a, b) = (seq(m), seq(reference));
            if a.len() == len && a.iter().zip(b).all(|(x, y)| self.same_shape(*x, *y)) {
                continue;
            }
            let i = a
                .iter()
                .zip(b)
                .position(|(x, y)| !self.same_shape(*x, *y))
                .unwrap_or(a.len().min(b.len()));
            let name = |s: &[u32]| {
                s.get(i).map_or("nothing more".to_string(), |&it| {
                    self.function(self.items.items[it as usize].0)
                })
            };
            let why = if a.len() == b.len() {
                format!(
                    "{} makes {} here and {} makes {} — they differ in more than numbers (a special rank, a handle, the function)",
                    self.at(m),
                    name(a),
                    self.at(reference),
                    name(b),
                )
            } else {
                format!(
                    "{} makes {} calls and {} here, {} makes {len} and {} — the calls change with P, which no fit covers",
                    self.at(m),
                    a.len(),
                    name(a),
                    self.at(reference),
                    name(b),
                )
            };
            self.problem(format!("{} (call {i} of thread {t})", name(b)), class, why);
            return None;
        }
        let mut out = Vec::with_capacity(len);
        let mut column = vec![0u32; members.len()];
        for i in 0..len {
            for (c, m) in column.iter_mut().zip(members) {
                *c = seq(m)[i];
            }
            let what = format!("call {i} of thread {t}");
            out.push(self.site(class, members, &column, what)?);
        }
        Some(out)
    }

    fn same_shape(&self, a: u32, b: u32) -> bool {
        self.items.items[a as usize].0 == self.items.items[b as usize].0
    }

    /// Fits one call site: `column` holds each member's item there.
    fn site(
        &mut self,
        class: &str,
        members: &[Member],
        column: &[u32],
        what: String,
    ) -> Option<u32> {
        if let Some(&f) = self.cache.get(column) {
            return Some(f);
        }
        let shape = self.items.items[column[0] as usize].0;
        if let Some(k) = column
            .iter()
            .position(|&c| self.items.items[c as usize].0 != shape)
        {
            let why = format!(
                "{} and {} differ in more than numbers",
                self.at(&members[0]),
                self.at(&members[k])
            );
            self.problem(format!("{} ({what})", self.function(shape)), class, why);
            return None;
        }
        let leaves = self.items.items[column[0] as usize].1.values.len();
        let mut forms = Vec::with_capacity(leaves);
        let mut labels = Vec::with_capacity(leaves);
        for leaf in 0..leaves {
            let samples: Vec<Sample> = members
                .iter()
                .zip(column)
                .map(|(m, &c)| {
                    let item = &self.items.items[c as usize].1;
                    Sample {
                        features: &m.2,
                        value: item.values[leaf],
                        modulus: item.moduli[leaf],
                    }
                })
                .collect();
            let field = self.field(shape, leaf);
            // A form another class established for this call site is preferred to what this
            // class's samples alone allow (a constant where it saw one grid extent only).
            let hinted: Vec<Form> = self
                .hints
                .get(&(shape, leaf))
                .into_iter()
                .flatten()
                .copied()
                .filter(|form| samples.iter().all(|s| s.obeys(*form)))
                .collect();
            let own = fit(&samples, &self.groups);
            for form in own.iter().filter(|f| f.varies()) {
                let known = self.found.entry((shape, leaf)).or_default();
                if !known.contains(form) {
                    known.push(*form);
                }
            }
            let alternatives = if hinted.is_empty() { own } else { hinted };
            match alternatives.first().copied() {
                Some(form) => {
                    if form.varies() {
                        self.varying
                            .insert(format!("{} {field} = {form}", self.function(shape)));
                    }
                    labels.push(format!("{} {field} ({what})", self.function(shape)));
                    forms.push(alternatives)
                }
                None => {
                    let seen: BTreeSet<String> = members
                        .iter()
                        .zip(&samples)
                        .map(|(m, s)| format!("{} at P={}", s.value, self.runs[m.0].p))
                        .collect();
                    let seen: Vec<String> = seen.into_iter().take(6).collect();
                    let why = format!(
                        "{field} is {} — no form fits (constant, or linear in or a quotient of rank, P, grid extents, coordinates, log2 P)",
                        seen.join(", ")
                    );
                    self.problem(format!("{} ({what})", self.function(shape)), class, why);
                    return None;
                }
            }
        }
        let id = self.fitted.len() as u32;
        self.fitted.push(Fitted {
            shape,
            forms,
            labels,
        });
        self.cache.insert(column.to_vec(), id);
        Some(id)
    }

    /// The name of leaf `leaf` of `shape`: its slot ("dest"), or its place in the
    /// communicator list.
    fn field(&self, shape: u32, leaf: usize) -> String {
        match &self.items.shapes[shape as usize] {
            Shape::Call(s) => {
                let slot = crate::leaves::leaf_values(s).get(leaf).copied();
                let slots = self.names.get(&s.function).map(|n| &n.1);
                match (slot, slots) {
                    (Some(v), Some(names)) if v < names.len() => names[v].clone(),
                    (Some(v), _) => format!("argument {v}"),
                    _ => format!("field {leaf}"),
                }
            }
            Shape::Comms(_) => format!("communicator field {leaf}"),
        }
    }
}
