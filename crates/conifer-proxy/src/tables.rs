//! Data tables: the values a statement takes call after call where they are not constant
//! (irregular message sizes, stepped offsets, a rank's own peers), stored as runs
//! `<start, stride, length>` in one pool and read back by the generated code through one
//! cursor per column (`nx(column)`), so the code stays one statement per call site.

use std::collections::HashMap;

/// The run pool and the columns reading it.
#[derive(Default)]
pub struct Tables {
    /// `(start, stride, length)` runs, sequences one after another.
    runs: Vec<(i64, i64, u64)>,
    /// Sequences already in the pool → index of their first run (equal sequences shared).
    known: HashMap<Vec<i64>, u32>,
    /// Columns handed out.
    columns: u32,
}

impl Tables {
    /// A new column; its values are given per reader with [`Tables::sequence`].
    pub fn column(&mut self) -> u32 {
        self.columns += 1;
        self.columns - 1
    }

    /// Columns handed out so far.
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// Stores `values` as runs (or finds them stored) and returns the index of the first run,
    /// where a reader's cursor starts.
    pub fn sequence(&mut self, values: &[i64]) -> u32 {
        if let Some(&at) = self.known.get(values) {
            return at;
        }
        let at = self.runs.len() as u32;
        self.runs.extend(runs(values));
        self.known.insert(values.to_vec(), at);
        at
    }

    /// Runs in the pool.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// The pool, the cursors and `nx`, as C (nothing without columns). Lines of the pool's
    /// initialiser hold eight runs each and start with a digit or a minus sign.
    pub fn declarations(&self) -> String {
        if self.columns == 0 {
            return String::new();
        }
        let mut out = String::from("static const long long R_[] = {\n");
        for chunk in self.runs.chunks(8) {
            let items: Vec<String> = chunk
                .iter()
                .map(|(s, d, n)| format!("{s},{d},{n}"))
                .collect();
            out += &items.join(", ");
            out += ",\n";
        }
        out += "0,0,0};\n";
        out += &format!(
            "typedef struct {{ int r; long long k; }} cur_t;\nstatic __thread cur_t cur_[{}];\n",
            self.columns.max(1)
        );
        out += CURSORS;
        out
    }
}

/// Reading the pool: `nx(c)` is column `c`'s next value; `start_` puts a rank's cursors at
/// its sequences.
const CURSORS: &str = r#"static long long nx(int c) {
    cur_t *u = &cur_[c];
    const long long *q = R_ + 3 * u->r;
    long long v = q[0] + q[1] * u->k;
    if (++u->k >= q[2]) { u->r++; u->k = 0; }
    return v;
}
static void start_(const int *at, int first, int n) {
    for (int i = 0; i < n; i++) cur_[first + i].r = at[i];
}
"#;

/// `values` as maximal runs of a constant stride, left to right.
fn runs(values: &[i64]) -> Vec<(i64, i64, u64)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let start = values[i];
        let stride = values.get(i + 1).map_or(0, |next| next.wrapping_sub(start));
        let mut n = 1;
        while i + n < values.len() && values[i + n].wrapping_sub(values[i + n - 1]) == stride {
            n += 1;
        }
        out.push((start, stride, n as u64));
        i += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_become_stepped_runs() {
        assert_eq!(runs(&[0, 8, 16, 24]), vec![(0, 8, 4)]);
        assert_eq!(runs(&[5, 5, 5]), vec![(5, 0, 3)]);
        assert_eq!(runs(&[3, 7, 1]), vec![(3, 4, 2), (1, 0, 1)]);
        assert_eq!(runs(&[]), Vec::<(i64, i64, u64)>::new());
    }

    #[test]
    fn equal_sequences_share_their_runs() {
        let mut t = Tables::default();
        let a = t.sequence(&[1, 2, 3]);
        let b = t.sequence(&[9]);
        assert_eq!(t.sequence(&[1, 2, 3]), a);
        assert_eq!((a, b, t.len()), (0, 1, 2));
    }
}
