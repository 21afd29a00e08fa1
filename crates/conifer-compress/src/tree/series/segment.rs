//! The pieces a series is made of: arithmetic [`Run`]s and [`Segment`]s (a run, or a cycle of
//! runs repeated).

/// `start, start + stride, …`: `len` values (arithmetic modulo 2^64).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Run {
    /// First value.
    pub start: u64,
    /// Difference between consecutive values (wrapping); 0 for a repeat.
    pub stride: u64,
    /// Number of values, at least 1.
    pub len: u64,
}

impl Run {
    /// The run of the one value `value`.
    pub(super) fn single(value: u64) -> Run {
        Run {
            start: value,
            stride: 0,
            len: 1,
        }
    }

    /// The `i`th value.
    pub(super) fn value(&self, i: u64) -> u64 {
        self.start.wrapping_add(self.stride.wrapping_mul(i))
    }

    /// Sum of the values, reading the stride as signed (counts may fall); 0 if negative.
    fn sum(&self) -> u128 {
        let (len, start) = (i128::from(self.len), i128::from(self.start));
        let stride = i128::from(self.stride as i64);
        let total = len * start + stride * (len * (len - 1) / 2);
        u128::try_from(total).unwrap_or(0)
    }
}

/// One piece of a series.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Segment {
    /// An arithmetic run.
    Run(Run),
    /// `runs` one after the other, the whole repeated `repeat` times.
    Cycle {
        /// The repeated body (1 ..= window runs).
        runs: Vec<Run>,
        /// Repetitions, at least 1.
        repeat: u64,
    },
}

impl Segment {
    /// Number of values.
    pub(super) fn len(&self) -> u128 {
        match self {
            Segment::Run(r) => u128::from(r.len),
            Segment::Cycle { runs, repeat } => {
                runs.iter().map(|r| u128::from(r.len)).sum::<u128>() * u128::from(*repeat)
            }
        }
    }

    /// Sum of the values, each run's summed as `Run::sum` does (0 if negative).
    pub(super) fn sum(&self) -> u128 {
        match self {
            Segment::Run(r) => r.sum(),
            Segment::Cycle { runs, repeat } => {
                runs.iter().map(Run::sum).sum::<u128>() * u128::from(*repeat)
            }
        }
    }

    /// The body's runs and how many times the body repeats (once for a run).
    pub(super) fn runs(&self) -> (&[Run], u64) {
        match self {
            Segment::Run(r) => (std::slice::from_ref(r), 1),
            Segment::Cycle { runs, repeat } => (runs, *repeat),
        }
    }

    /// The same segment with every run's start passed through `f`.
    pub(super) fn map(&self, f: &impl Fn(u64) -> u64) -> Segment {
        let map_run = |r: &Run| Run {
            start: f(r.start),
            ..*r
        };
        match self {
            Segment::Run(r) => Segment::Run(map_run(r)),
            Segment::Cycle { runs, repeat } => Segment::Cycle {
                runs: runs.iter().map(map_run).collect(),
                repeat: *repeat,
            },
        }
    }
}
