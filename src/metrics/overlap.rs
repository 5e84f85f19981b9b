//! Time-averaged concurrency of read holds, from the hold intervals themselves.
//!
//! A shared counter bumped inside the critical section would add a contended
//! cache line to the very lock being measured; instead each reader logs its
//! `[enter, leave)` times privately and the run integrates afterwards: the mean
//! number of readers inside while the lock is read-held is
//! `sum(hold durations) / |union of holds|`. It is exactly 1 for a lock that
//! never lets two readers in together, and > 1 only if holds truly overlapped.

/// One read hold, in nanoseconds since the run's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hold {
    pub enter_ns: u64,
    pub leave_ns: u64,
}

/// Integral and support of a set of holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Concurrency {
    /// Sum of all hold durations: the integral of "readers inside" over time, ns.
    pub reader_ns: u64,
    /// Length of the union of the holds: time the lock was read-held at all, ns.
    pub held_ns: u64,
}

impl Concurrency {
    /// Mean readers inside while read-held; 0 when never held.
    pub fn mean_readers(&self) -> f64 {
        if self.held_ns == 0 {
            0.0
        } else {
            self.reader_ns as f64 / self.held_ns as f64
        }
    }
}

/// Integrate holds gathered from every thread (any order; sorted here).
pub fn integrate(mut holds: Vec<Hold>) -> Concurrency {
    holds.sort_unstable();
    let mut out = Concurrency::default();
    // The union is built by sweeping holds in start order, extending the current
    // covered segment [seg_start, seg_end) while holds overlap it.
    let mut segment: Option<(u64, u64)> = None;
    for h in holds {
        let len = h.leave_ns.saturating_sub(h.enter_ns);
        out.reader_ns += len;
        segment = match segment {
            Some((s, e)) if h.enter_ns <= e => Some((s, e.max(h.leave_ns))),
            Some((s, e)) => {
                out.held_ns += e - s;
                Some((h.enter_ns, h.leave_ns.max(h.enter_ns)))
            }
            None => Some((h.enter_ns, h.leave_ns.max(h.enter_ns))),
        };
    }
    if let Some((s, e)) = segment {
        out.held_ns += e - s;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(enter_ns: u64, leave_ns: u64) -> Hold {
        Hold { enter_ns, leave_ns }
    }

    #[test]
    fn disjoint_holds_average_exactly_one_reader() {
        let c = integrate(vec![h(30, 40), h(0, 10), h(10, 20)]);
        assert_eq!(
            c,
            Concurrency {
                reader_ns: 30,
                held_ns: 30
            }
        );
        assert_eq!(c.mean_readers(), 1.0);
    }

    #[test]
    fn two_fully_overlapping_readers_average_two() {
        let c = integrate(vec![h(0, 100), h(0, 100)]);
        assert_eq!(c.mean_readers(), 2.0);
    }

    #[test]
    fn partial_overlap_is_weighted_by_time() {
        // [0,100) and [50,150): 200 reader-ns over 150 held-ns.
        let c = integrate(vec![h(50, 150), h(0, 100)]);
        assert_eq!(
            c,
            Concurrency {
                reader_ns: 200,
                held_ns: 150
            }
        );
    }

    #[test]
    fn nested_and_gapped_holds() {
        // [0,100) contains [10,20); gap; [200,210).
        let c = integrate(vec![h(200, 210), h(10, 20), h(0, 100)]);
        assert_eq!(
            c,
            Concurrency {
                reader_ns: 120,
                held_ns: 110
            }
        );
    }

    #[test]
    fn no_holds_means_no_readers() {
        assert_eq!(integrate(Vec::new()).mean_readers(), 0.0);
    }
}
