//! One clock for all ranks. Each rank times its calls on its own clock, whose zero is the
//! moment its recorder started (right after its `MPI_Init` returned): its *local* time, in
//! nanoseconds. A [`RankClock`] says how that clock relates to rank 0's — the offset measured
//! by ping-pong at `MPI_Init` and again at `MPI_Finalize` (minimum round trip, as Scalasca
//! does), interpolated linearly in between to correct drift — and where each of the rank's
//! threads starts and ends on it, so readers put every call of every rank on rank 0's clock
//! (the *synchronised* clock).

use crate::varint::{put_i64, put_u64, Reader};

/// One offset measurement: at `local_ns` on this rank's clock, rank 0's clock read
/// `local_ns + offset_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClockSample {
    /// When, on this rank's clock.
    pub local_ns: i64,
    /// Rank 0's clock minus this rank's, then.
    pub offset_ns: i64,
}

/// Where one thread's calls lie on its rank's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ThreadSpan {
    /// Where the thread's as-run clock starts: its first call's wrapper entry less one clock
    /// read (so every call, the first too, starts its interval plus one clock read after the
    /// previous call's exit; see `conifer_trace::as_run`).
    pub base_ns: i64,
    /// When its last call's MPI part ended, exactly (readers anchor a thread's
    /// reconstructed end here, which removes the drift of summed lossy values).
    pub end_ns: i64,
}

/// How one rank's clock maps onto rank 0's, and where its threads lie on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RankClock {
    /// What one clock read costs, in picoseconds: the recorder takes two out of each call's
    /// times (one from its interval, one from its duration).
    pub read_ps: u64,
    /// The offset to rank 0 measured when `MPI_Init` returned (`None`: not measured, as in
    /// traces written before Conifer measured it: offset 0).
    pub init: Option<ClockSample>,
    /// The offset to rank 0 measured at `MPI_Finalize` (`None` for a rank that never got
    /// there).
    pub finalize: Option<ClockSample>,
    /// Per thread, where it lies (empty in traces written before Conifer kept it).
    pub threads: Vec<ThreadSpan>,
}

impl RankClock {
    /// Rank 0's clock reading at `local_ns` on this rank's: the offset interpolated
    /// linearly between the two measurements (extended beyond them), the one offset when
    /// only one was measured, none when neither was.
    pub fn to_global(&self, local_ns: f64) -> f64 {
        local_ns + self.offset_at(local_ns)
    }

    /// The offset to rank 0's clock at `local_ns`.
    pub fn offset_at(&self, local_ns: f64) -> f64 {
        match (self.init, self.finalize) {
            (Some(a), Some(b)) if b.local_ns != a.local_ns => {
                let slope = (b.offset_ns - a.offset_ns) as f64 / (b.local_ns - a.local_ns) as f64;
                a.offset_ns as f64 + (local_ns - a.local_ns as f64) * slope
            }
            (Some(a), _) | (None, Some(a)) => a.offset_ns as f64,
            (None, None) => 0.0,
        }
    }

    /// One clock read in nanoseconds.
    pub fn read_ns(&self) -> f64 {
        self.read_ps as f64 / 1e3
    }

    /// The clock as a rank column value (`docs/format.md`, `CLCK`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.read_ps);
        for sample in [self.init, self.finalize] {
            match sample {
                None => put_u64(out, 0),
                Some(s) => {
                    put_u64(out, 1);
                    put_i64(out, s.local_ns);
                    put_i64(out, s.offset_ns);
                }
            }
        }
        put_u64(out, self.threads.len() as u64);
        for t in &self.threads {
            put_i64(out, t.base_ns);
            put_i64(out, t.end_ns);
        }
    }

    /// Reads what [`RankClock::encode`] wrote; `None` when malformed.
    pub fn decode(r: &mut Reader) -> Option<RankClock> {
        let read_ps = r.u64()?;
        let mut sample = || -> Option<Option<ClockSample>> {
            match r.u64()? {
                0 => Some(None),
                1 => Some(Some(ClockSample {
                    local_ns: r.i64()?,
                    offset_ns: r.i64()?,
                })),
                _ => None,
            }
        };
        let init = sample()?;
        let finalize = sample()?;
        let n = r.count()?;
        let threads = (0..n)
            .map(|_| {
                Some(ThreadSpan {
                    base_ns: r.i64()?,
                    end_ns: r.i64()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(RankClock {
            read_ps,
            init,
            finalize,
            threads,
        })
    }
}

/// The earliest moment any thread of any rank started, on the synchronised clock (0 for a
/// trace without thread spans): exports count their timestamps from here, so none is
/// negative (ranks whose `MPI_Init` began before rank 0's recorder started have negative
/// times on rank 0's clock).
pub fn earliest_ns<'a>(clocks: impl IntoIterator<Item = &'a RankClock>) -> i64 {
    clocks
        .into_iter()
        .flat_map(|c| {
            c.threads
                .iter()
                .map(move |t| c.to_global(t.base_ns as f64).floor() as i64)
        })
        .min()
        .unwrap_or(0)
        .min(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_interpolate_between_the_two_measurements() {
        // Offset 1,000 ns at local 0 and 1,200 ns at local 1 s: 200 ns of drift a second, so
        // at 0.25 s the offset is 1,050 ns, and it extends past both ends.
        let clock = RankClock {
            init: Some(ClockSample {
                local_ns: 0,
                offset_ns: 1_000,
            }),
            finalize: Some(ClockSample {
                local_ns: 1_000_000_000,
                offset_ns: 1_200,
            }),
            ..RankClock::default()
        };
        assert_eq!(clock.to_global(250_000_000.0), 250_001_050.0);
        assert_eq!(clock.offset_at(2_000_000_000.0), 1_400.0);
        assert_eq!(clock.offset_at(-1_000_000_000.0), 800.0);
        let one = RankClock {
            init: Some(ClockSample {
                local_ns: 5,
                offset_ns: -7,
            }),
            ..RankClock::default()
        };
        assert_eq!(one.to_global(100.0), 93.0);
        assert_eq!(RankClock::default().to_global(42.0), 42.0);
    }

    #[test]
    fn round_trips() {
        let clock = RankClock {
            read_ps: 7_250,
            init: Some(ClockSample {
                local_ns: -3,
                offset_ns: 12_345,
            }),
            finalize: None,
            threads: vec![
                ThreadSpan {
                    base_ns: -40_000,
                    end_ns: 9_000_000,
                },
                ThreadSpan {
                    base_ns: 100,
                    end_ns: 200,
                },
            ],
        };
        let mut bytes = Vec::new();
        clock.encode(&mut bytes);
        let mut r = Reader::new(&bytes);
        assert_eq!(RankClock::decode(&mut r), Some(clock));
        assert_eq!(r.remaining(), 0);
        assert_eq!(RankClock::decode(&mut Reader::new(&[0, 2])), None);
    }
}
