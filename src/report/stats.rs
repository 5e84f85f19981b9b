//! The statistics behind `compare`: a sample summary, the LKP change rule and
//! an mmtests-style significance test. Tested on fixed inputs: statistics code
//! gets its own tests (locktorture's Max/Min once summed the wrong counter).

/// Summary of one metric's samples (one per repeat).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 denominator); 0 for one sample.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let n = samples.len();
        if n == 0 {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let squares: f64 = samples.iter().map(|s| (s - mean).powi(2)).sum();
        let stddev = if n > 1 {
            (squares / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Summary {
            n,
            mean,
            stddev,
            min,
            max,
        })
    }

    /// Standard deviation as a percentage of the mean (LKP's `±stddev%`); 0
    /// when there is no spread, infinite for spread around a zero mean.
    pub fn stddev_pct(&self) -> f64 {
        if self.stddev == 0.0 {
            0.0
        } else {
            100.0 * self.stddev / self.mean.abs()
        }
    }
}

/// Change of the mean from `base` to `new`, percent: 0 when both are equal
/// (zero included), +-infinity from a zero base (LKP prints `+Inf%`).
pub fn pct_change(base: f64, new: f64) -> f64 {
    if base == new {
        0.0
    } else if base == 0.0 {
        f64::INFINITY.copysign(new)
    } else {
        100.0 * (new - base) / base.abs()
    }
}

/// LKP-style `!`: at least 3 samples a side and min..max ranges that do not
/// overlap (docs/kernel.md, "Comparing runs").
pub fn lkp_changed(base: &Summary, new: &Summary) -> bool {
    const MIN_SAMPLES: usize = 3; // the rule's sample floor (docs/kernel.md)
    base.n >= MIN_SAMPLES && new.n >= MIN_SAMPLES && (base.max < new.min || new.max < base.min)
}

/// mmtests' `*`: the means differ significantly by Welch's two-sided t-test at
/// the 95% level. Needs at least 2 samples a side. Two constant sides differ
/// for certain when their values differ.
pub fn welch_significant(base: &Summary, new: &Summary) -> bool {
    if base.n < 2 || new.n < 2 {
        return false;
    }
    let var_base = base.stddev.powi(2) / base.n as f64;
    let var_new = new.stddev.powi(2) / new.n as f64;
    let se2 = var_base + var_new;
    let diff = (new.mean - base.mean).abs();
    if se2 == 0.0 {
        return diff > 0.0;
    }
    let t = diff / se2.sqrt();
    // Welch-Satterthwaite degrees of freedom.
    let df = se2.powi(2)
        / (var_base.powi(2) / (base.n - 1) as f64 + var_new.powi(2) / (new.n - 1) as f64);
    t > t_975(df)
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided
/// 95%), from the standard table, interpolated linearly in 1/df between rows
/// (the usual table interpolation; exact at the listed df).
pub fn t_975(df: f64) -> f64 {
    // (df, t) from any statistics table of Student's t, e.g. NIST/SEMATECH
    // e-Handbook of Statistical Methods, section 1.3.6.7.2; df = inf is the normal.
    const TABLE: [(f64, f64); 26] = [
        (1.0, 12.706),
        (2.0, 4.303),
        (3.0, 3.182),
        (4.0, 2.776),
        (5.0, 2.571),
        (6.0, 2.447),
        (7.0, 2.365),
        (8.0, 2.306),
        (9.0, 2.262),
        (10.0, 2.228),
        (11.0, 2.201),
        (12.0, 2.179),
        (13.0, 2.160),
        (14.0, 2.145),
        (15.0, 2.131),
        (16.0, 2.120),
        (17.0, 2.110),
        (18.0, 2.101),
        (19.0, 2.093),
        (20.0, 2.086),
        (25.0, 2.060),
        (30.0, 2.042),
        (40.0, 2.021),
        (60.0, 2.000),
        (120.0, 1.980),
        (f64::INFINITY, 1.960),
    ];
    let df = df.max(1.0);
    let upper = TABLE
        .iter()
        .position(|&(d, _)| d >= df)
        .unwrap_or(TABLE.len() - 1);
    if upper == 0 {
        return TABLE[0].1;
    }
    let ((d0, t0), (d1, t1)) = (TABLE[upper - 1], TABLE[upper]);
    let at = (1.0 / d0 - 1.0 / df) / (1.0 / d0 - 1.0 / d1);
    t0 + at * (t1 - t0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(samples: &[f64]) -> Summary {
        Summary::of(samples).unwrap()
    }

    #[test]
    fn summary_of_fixed_samples() {
        let s = summary(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.n, s.mean, s.min, s.max), (8, 5.0, 2.0, 9.0));
        // Sum of squares 32 over n - 1 = 7.
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.stddev_pct() - 100.0 * (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-9);
        let one = summary(&[3.0]);
        assert_eq!((one.stddev, one.stddev_pct()), (0.0, 0.0));
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn percent_change() {
        assert_eq!(pct_change(200.0, 250.0), 25.0);
        assert_eq!(pct_change(-200.0, -250.0), -25.0);
        assert_eq!(pct_change(0.0, 0.0), 0.0);
        assert_eq!(pct_change(0.0, 5.0), f64::INFINITY);
        assert_eq!(pct_change(0.0, -5.0), f64::NEG_INFINITY);
    }

    #[test]
    fn lkp_rule_needs_three_samples_and_disjoint_ranges() {
        let (low, high) = (summary(&[1.0, 2.0, 3.0]), summary(&[4.0, 5.0, 6.0]));
        assert!(lkp_changed(&low, &high) && lkp_changed(&high, &low));
        // Two samples on one side: never marked, however far apart.
        assert!(!lkp_changed(
            &summary(&[1.0, 2.0]),
            &summary(&[100.0, 101.0, 102.0])
        ));
        // Touching ranges overlap.
        assert!(!lkp_changed(&low, &summary(&[3.0, 5.0, 6.0])));
        assert!(!lkp_changed(&low, &low));
    }

    #[test]
    fn welch_on_fixed_samples() {
        // t = 3 / sqrt(2/3) = 3.674, df = 4, t_975(4) = 2.776: significant.
        let (a, b) = (summary(&[1.0, 2.0, 3.0]), summary(&[4.0, 5.0, 6.0]));
        assert!(welch_significant(&a, &b));
        // t = 1 / sqrt(2/3) = 1.225 < 2.776: not.
        assert!(!welch_significant(&a, &summary(&[2.0, 3.0, 4.0])));
        // Same samples: t = 0.
        assert!(!welch_significant(&a, &a));
        // One sample a side: no test.
        assert!(!welch_significant(&summary(&[1.0]), &summary(&[9.0])));
        // Constant and different: certain; constant and equal: no change.
        assert!(welch_significant(
            &summary(&[5.0, 5.0]),
            &summary(&[6.0, 6.0])
        ));
        assert!(!welch_significant(
            &summary(&[5.0, 5.0]),
            &summary(&[5.0, 5.0])
        ));
        // Unequal variances: t = 8.5 / sqrt(25/3 + 0.125/5) = 2.94. Welch's
        // df = 2.01 needs t > 4.30: not significant (a pooled test, df = 6,
        // t > 2.447, would have starred it).
        let wide = summary(&[0.0, 5.0, 10.0]);
        let narrow = summary(&[13.0, 13.5, 14.0, 13.5, 13.5]);
        assert!(!welch_significant(&wide, &narrow));
        // Moved further (t = 13.5 / 2.891 = 4.67 > 4.30), it is.
        let further = summary(&[18.0, 18.5, 19.0, 18.5, 18.5]);
        assert!(welch_significant(&wide, &further));
    }

    #[test]
    fn t_table_is_exact_at_rows_and_monotone_between() {
        assert_eq!(t_975(1.0), 12.706);
        assert_eq!(t_975(4.0), 2.776);
        assert_eq!(t_975(0.5), 12.706);
        assert!((t_975(1e12) - 1.960).abs() < 1e-6);
        let mut last = f64::INFINITY;
        for tenth in 10..2000 {
            let t = t_975(tenth as f64 / 10.0);
            assert!(t <= last && t > 1.96, "df {}", tenth as f64 / 10.0);
            last = t;
        }
        // Between rows, within the bracketing rows.
        let t = t_975(22.0);
        assert!(t < 2.086 && t > 2.060);
    }
}
