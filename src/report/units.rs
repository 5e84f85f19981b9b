//! Figures with their units, as every table prints them.

/// Nanoseconds with a unit a reader takes in at a glance: 850ns, 12.3us, 4.56ms, 1.20s.
pub fn fmt_ns(ns: u64) -> String {
    let f = ns as f64;
    match ns {
        0..1_000 => format!("{ns}ns"),
        1_000..1_000_000 => format!("{:.1}us", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2}ms", f / 1e6),
        _ => format!("{:.2}s", f / 1e9),
    }
}

/// A rate with a thousands-friendly precision: `12.3k/s`, `4.56M/s`.
pub fn fmt_rate(per_s: f64) -> String {
    match per_s {
        r if r >= 1e6 => format!("{:.2}M/s", r / 1e6),
        r if r >= 1e4 => format!("{:.1}k/s", r / 1e3),
        r => format!("{r:.1}/s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_switch_at_each_thousand() {
        assert_eq!(fmt_ns(999), "999ns");
        assert_eq!(fmt_ns(1_500), "1.5us");
        assert_eq!(fmt_ns(2_500_000), "2.50ms");
        assert_eq!(fmt_ns(3_000_000_000), "3.00s");
        assert_eq!(fmt_rate(12.34), "12.3/s");
        assert_eq!(fmt_rate(12_345.0), "12.3k/s");
        assert_eq!(fmt_rate(4_560_000.0), "4.56M/s");
    }
}
