//! How evenly the threads of one role progressed.
//!
//! Two figures: Jain's fairness index (Jain, Chiu, Hawe, "A Quantitative Measure
//! of Fairness and Discrimination", DEC-TR-301, 1984), and locktorture's
//! starvation mark `???` (kernel/locking/locktorture.c, __torture_print_stats:
//! printed when max/2 > min over the per-thread acquisition counts).

use crate::results::Fairness;

/// Jain's index over per-thread op counts: (sum x)^2 / (n * sum x^2).
///
/// 1 when every thread did the same, 1/n when one thread did everything.
/// Empty input and all-zero input give 1: nobody got more than anyone else (a
/// role that made no progress at all is the verdict's business, not fairness's).
pub fn jain(counts: &[u64]) -> f64 {
    let sum: f64 = counts.iter().map(|&c| c as f64).sum();
    let sum_sq: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
    if sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (counts.len() as f64 * sum_sq)
}

/// locktorture's `???`: the busiest thread got more than twice the least busy
/// one's acquisitions. Integer halving, as the kernel's `max / 2 > min` on longs
/// (so 3/1 is not marked, 4/1 is, and 1/0 is not).
pub fn starved_mark(max: u64, min: u64) -> bool {
    max / 2 > min
}

/// Jain index, max, min and the starvation mark over one role's per-thread counts.
/// Max and min are 0 for a role with no threads.
pub fn fairness(counts: &[u64]) -> Fairness {
    let max = counts.iter().copied().max().unwrap_or(0);
    let min = counts.iter().copied().min().unwrap_or(0);
    Fairness {
        jain: jain(counts),
        max,
        min,
        starved_mark: starved_mark(max, min),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn jain_is_one_when_even_and_one_over_n_when_one_did_all() {
        assert!(close(jain(&[1, 1, 1, 1]), 1.0));
        assert!(close(jain(&[7, 7]), 1.0));
        assert!(close(jain(&[1, 0, 0, 0]), 0.25));
        assert!(close(jain(&[0, 0, 9]), 1.0 / 3.0));
    }

    #[test]
    fn jain_of_an_uneven_split() {
        // (1+3)^2 / (2 * (1+9)) = 16/20
        assert!(close(jain(&[1, 3]), 0.8));
    }

    #[test]
    fn jain_of_nothing_is_one() {
        assert!(close(jain(&[]), 1.0));
        assert!(close(jain(&[0, 0]), 1.0));
    }

    #[test]
    fn starvation_mark_uses_integer_halving_like_the_kernel() {
        assert!(!starved_mark(3, 1));
        assert!(starved_mark(4, 1));
        assert!(!starved_mark(1, 0));
        assert!(starved_mark(2, 0));
        assert!(!starved_mark(100, 50));
        assert!(starved_mark(101, 49));
    }

    #[test]
    fn fairness_takes_max_and_min_of_the_acquisition_counts() {
        let f = fairness(&[10, 2, 6]);
        assert_eq!((f.max, f.min), (10, 2));
        assert!(f.starved_mark);
        assert!(close(f.jain, 18.0 * 18.0 / (3.0 * 140.0)));
        let even = fairness(&[5, 5]);
        assert!(!even.starved_mark && close(even.jain, 1.0));
        let none = fairness(&[]);
        assert_eq!((none.max, none.min, none.starved_mark), (0, 0, false));
    }
}
