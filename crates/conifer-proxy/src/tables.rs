//! Data tables: the values a statement takes call after call where they are not constant
//! (irregular message sizes, stepped offsets, a rank's own peers), stored in one pool of
//! numbers and read back by the generated code through one cursor per column (`nx(column)`,
//! per thread), so the code stays one statement per call site. A sequence is stored as
//! records: `n, stride, start` for `n >= 3` values advancing by `stride`; `0, p, r` followed
//! by `p` values repeated `r` times (a cycle, such as the counts a loop takes in turn); or
//! `-n` followed by `n` values as they are.

use std::collections::HashMap;

/// The shortest arithmetic run stored as such (shorter ones are cheaper as plain values).
const MIN_RUN: usize = 3;
/// The longest period of a cycle looked for.
const MAX_PERIOD: usize = 32;

/// The pool and the columns reading it.
#[derive(Default)]
pub struct Tables {
    /// The records of every sequence, one after another.
    pool: Vec<i64>,
    /// Sequences already in the pool → index of their first record (equal sequences shared).
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

    /// Stores `values` (or finds them stored) and returns where a reader's cursor starts.
    pub fn sequence(&mut self, values: &[i64]) -> u32 {
        if let Some(&at) = self.known.get(values) {
            return at;
        }
        let at = self.pool.len() as u32;
        self.pool.extend(records(values));
        self.known.insert(values.to_vec(), at);
        at
    }

    /// Numbers in the pool.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// The pool, the cursors and `nx`, as C (nothing without columns). Lines of the pool's
    /// initialiser hold up to 24 numbers each and start with a digit or a minus sign.
    pub fn declarations(&self) -> String {
        if self.columns == 0 {
            return String::new();
        }
        let mut out = String::from("static const long long R_[] = {\n");
        for chunk in self.pool.chunks(24) {
            let items: Vec<String> = chunk.iter().map(i64::to_string).collect();
            out += &items.join(",");
            out += ",\n";
        }
        out += "0};\n";
        out += &format!(
            "typedef struct {{ int r; long long k; }} cur_t;\nstatic __thread cur_t cur_[{}];\n",
            self.columns
        );
        out += CURSORS;
        out
    }
}

/// Reading the pool: `nx(c)` is column `c`'s next value; `start_` puts a thread's cursors at
/// its sequences.
const CURSORS: &str = r#"static long long nx(int c) {
    cur_t *u = &cur_[c];
    const long long *q = R_ + u->r;
    long long v;
    if (q[0] > 0) {
        v = q[2] + q[1] * u->k;
        if (++u->k >= q[0]) { u->r += 3; u->k = 0; }
    } else if (q[0] == 0) {
        v = q[3 + u->k % q[1]];
        if (++u->k >= q[1] * q[2]) { u->r += 3 + q[1]; u->k = 0; }
    } else {
        v = q[1 + u->k];
        if (++u->k >= -q[0]) { u->r += 1 - q[0]; u->k = 0; }
    }
    return v;
}
static void start_(const int *at, int first, int n) {
    for (int i = 0; i < n; i++) cur_[first + i].r = at[i];
}
"#;

/// `values` as records, left to right: at each place the longer of the maximal run of a
/// constant stride (at least [`MIN_RUN`] values) and the longest cycle (at least three
/// repetitions of up to [`MAX_PERIOD`] values), the values between them as plain blocks.
fn records(values: &[i64]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut plain: Vec<i64> = Vec::new();
    let flush = |plain: &mut Vec<i64>, out: &mut Vec<i64>| {
        if !plain.is_empty() {
            out.push(-(plain.len() as i64));
            out.append(plain);
        }
    };
    let mut i = 0;
    while i < values.len() {
        let rest = &values[i..];
        let stride = rest.get(1).map_or(0, |next| next.wrapping_sub(rest[0]));
        let mut n = 1;
        while n < rest.len() && rest[n].wrapping_sub(rest[n - 1]) == stride {
            n += 1;
        }
        let (period, reps) = cycle(rest);
        if period * reps > n && reps >= 3 {
            flush(&mut plain, &mut out);
            out.extend([0, period as i64, reps as i64]);
            out.extend_from_slice(&rest[..period]);
            i += period * reps;
        } else if n >= MIN_RUN {
            flush(&mut plain, &mut out);
            out.extend([n as i64, stride, rest[0]]);
            i += n;
        } else {
            plain.push(rest[0]);
            i += 1;
        }
    }
    flush(&mut plain, &mut out);
    out
}

/// The cycle at the start of `values` covering most of them: its period (at least 2) and
/// its whole repetitions; `(0, 0)` when none repeats.
fn cycle(values: &[i64]) -> (usize, usize) {
    let mut best = (0, 0);
    for p in 2..=MAX_PERIOD.min(values.len() / 2) {
        let same = values[p..]
            .iter()
            .zip(values)
            .take_while(|(a, b)| a == b)
            .count();
        let reps = (same + p) / p;
        if reps >= 2 && p * reps > best.0 * best.1 {
            best = (p, reps);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_become_stepped_runs_and_plain_blocks() {
        assert_eq!(records(&[0, 8, 16, 24]), vec![4, 8, 0]);
        assert_eq!(records(&[5, 5, 5]), vec![3, 0, 5]);
        assert_eq!(records(&[3, 7, 1]), vec![-3, 3, 7, 1]);
        assert_eq!(records(&[9, 1, 2, 3, 4, 0]), vec![-1, 9, 4, 1, 1, -1, 0]);
        assert_eq!(records(&[]), Vec::<i64>::new());
    }

    #[test]
    fn repeated_blocks_become_cycles() {
        assert_eq!(records(&[0, 2, 0, 2, 0, 2, 0]), vec![0, 2, 3, 0, 2, -1, 0]);
        assert_eq!(
            records(&[7, 1, 5, 9, 1, 5, 9, 1, 5, 9]),
            vec![-1, 7, 0, 3, 3, 1, 5, 9]
        );
        // A stride run longer than any cycle stays a run.
        assert_eq!(records(&[0, 1, 2, 3, 4, 5]), vec![6, 1, 0]);
    }

    #[test]
    fn equal_sequences_share_their_records() {
        let mut t = Tables::default();
        let a = t.sequence(&[1, 2, 3]);
        let b = t.sequence(&[9]);
        assert_eq!(t.sequence(&[1, 2, 3]), a);
        assert_eq!((a, b, t.len()), (0, 3, 5));
    }
}
