//! How sure a cross-check row's error is: a percentile bootstrap interval
//! of `median(sim) / median(native) - 1`.
//!
//! A row's error is a ratio of two medians of a handful of repeats, and the
//! native repeats here spread up to ±85% (aim7 at one CPU). Whether a row
//! that reads +35% is outside ±30% or only drew its seeds badly is what a
//! reader asks first. The bootstrap answers it without assuming a
//! distribution: resample each side's repeats with replacement, take the
//! ratio of the resampled medians, many times; the middle 95% of those
//! ratios is the interval (Efron and Tibshirani, "An Introduction to the
//! Bootstrap", 1993, ch. 13, the percentile interval). With 9 repeats a side
//! it is coarse (a median of 9 takes at most 9 values), so it is read as
//! "could this row's repeats have given an error inside the bound", not as
//! an exact coverage.
//!
//! Deterministic: the resamples come from a fixed seed, so the same repeats
//! print the same interval.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::crosscheck::{error_pct, median};

/// Resamples per interval: the 2.5% and 97.5% points of 10,000 draws move
/// by well under a whole percent between seeds on this project's rows.
pub const RESAMPLES: usize = 10_000;

/// The resamples' seed (any fixed value: the interval must not change from
/// one rendering of the same repeats to the next).
const SEED: u64 = 0x726d_6170; // "rmap"

/// The two-sided level of the interval.
pub const LEVEL: f64 = 0.95;

/// How a row's repeats are drawn in a resample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resample {
    /// Each side's repeats on their own: the two sides' repeats share only
    /// their seeds and the hour they ran in.
    Sides,
    /// Repeat by repeat, a native run with its simulated twin: each pair
    /// ran on a profile of its own moment (`crosscheck --recalibrate-every
    /// repeat`), so what moved the machine between repeats moved both runs
    /// of a pair, and drawing them apart would count that drift as noise.
    /// The sides must be as long as each other.
    Pairs,
}

/// The 95% percentile-bootstrap interval of the error `100 * (median(sim) /
/// median(native) - 1)`, percent, as (low, high), its repeats drawn `how`.
/// None when a side has no repeats, pairs have sides of unequal length, or
/// a resampled native median is 0 (no ratio exists).
pub fn error_interval(native: &[f64], sim: &[f64], how: Resample) -> Option<(f64, f64)> {
    if native.is_empty() || sim.is_empty() {
        return None;
    }
    if how == Resample::Pairs && native.len() != sim.len() {
        return None;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(SEED);
    let (mut n, mut s) = (Vec::new(), Vec::new());
    let mut errors = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        n.clear();
        s.clear();
        match how {
            Resample::Sides => {
                for (side, buf) in [(native, &mut n), (sim, &mut s)] {
                    buf.extend((0..side.len()).map(|_| side[rng.random_range(0..side.len())]));
                }
            }
            Resample::Pairs => {
                for _ in 0..native.len() {
                    let i = rng.random_range(0..native.len());
                    n.push(native[i]);
                    s.push(sim[i]);
                }
            }
        }
        errors.push(error_pct(median(&n)?, median(&s)?)?);
    }
    errors.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    Some((quantile(&errors, tail), quantile(&errors, 1.0 - tail)))
}

/// The `q` quantile of sorted `v`: the value at rank `q * (len - 1)`,
/// rounded to the nearest rank (so an interval's ends are values some
/// resample gave).
fn quantile(v: &[f64], q: f64) -> f64 {
    v[(q * (v.len() - 1) as f64).round() as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_sides_give_their_one_error() {
        assert_eq!(
            error_interval(&[100.0; 9], &[150.0; 9], Resample::Sides),
            Some((50.0, 50.0))
        );
    }

    /// Sim's 9 repeats are five 100s and four 200s: its median is 100, and
    /// a resample's median is 200 when 5 or more of its 9 draws are, which
    /// happens with probability 1 - P(Bin(9, 4/9) <= 4), about 0.37. So
    /// the interval runs from 0% to +100%: a median-free statistic (the
    /// mean, +44%) or a one-sided resample would not give both ends.
    #[test]
    fn the_interval_spans_what_resampled_medians_can_give() {
        let sim = [
            100.0, 200.0, 100.0, 200.0, 100.0, 200.0, 100.0, 200.0, 100.0,
        ];
        assert_eq!(
            error_interval(&[100.0; 9], &sim, Resample::Sides),
            Some((0.0, 100.0))
        );
    }

    #[test]
    fn the_interval_holds_the_error_and_stays_within_the_sides_extremes() {
        let native = [90.0, 95.0, 100.0, 105.0, 110.0, 98.0, 102.0, 93.0, 107.0];
        let sim = [
            140.0, 145.0, 150.0, 155.0, 160.0, 148.0, 152.0, 143.0, 157.0,
        ];
        let (lo, hi) = error_interval(&native, &sim, Resample::Sides).unwrap();
        assert!(lo < 50.0 && 50.0 < hi, "{lo}..{hi} misses +50%");
        // No resample's ratio of medians can pass min/max or max/min.
        assert!(lo >= 100.0 * (140.0 / 110.0 - 1.0), "{lo}");
        assert!(hi <= 100.0 * (160.0 / 90.0 - 1.0), "{hi}");
        // A wider native spread widens the interval.
        let wide = native.map(|x| 100.0 + 4.0 * (x - 100.0));
        let (wlo, whi) = error_interval(&wide, &sim, Resample::Sides).unwrap();
        assert!(
            whi - wlo > hi - lo,
            "{wlo}..{whi} not wider than {lo}..{hi}"
        );
    }

    #[test]
    fn no_repeats_or_a_zero_native_median_give_no_interval() {
        assert_eq!(error_interval(&[], &[1.0], Resample::Sides), None);
        assert_eq!(error_interval(&[1.0], &[], Resample::Sides), None);
        assert_eq!(error_interval(&[0.0; 5], &[1.0; 5], Resample::Sides), None);
    }

    #[test]
    fn the_same_repeats_give_the_same_interval() {
        let native = [3.0, 9.0, 4.0, 7.0, 5.0];
        let sim = [6.0, 2.0, 8.0, 5.0, 9.0];
        assert_eq!(
            error_interval(&native, &sim, Resample::Sides),
            error_interval(&native, &sim, Resample::Sides)
        );
    }

    /// Runs that moved together with the machine: each pair's sim is 1.2
    /// times its native, while the repeats spread 4 to 1. Drawn as pairs,
    /// every resample says +20%; drawn apart, the spread swamps it.
    #[test]
    fn pairs_keep_what_moved_both_runs_of_a_repeat_out_of_the_interval() {
        let native = [50.0, 200.0, 80.0, 120.0, 60.0, 150.0, 100.0];
        let sim = native.map(|x| 1.2 * x);
        let (lo, hi) = error_interval(&native, &sim, Resample::Pairs).unwrap();
        assert!(
            (lo - 20.0).abs() < 1e-9 && (hi - 20.0).abs() < 1e-9,
            "{lo}..{hi}"
        );
        let (lo, hi) = error_interval(&native, &sim, Resample::Sides).unwrap();
        assert!(lo < -20.0 && hi > 60.0, "{lo}..{hi}");
        assert_eq!(
            error_interval(&native, &sim[1..], Resample::Pairs),
            None,
            "unequal sides"
        );
    }
}
