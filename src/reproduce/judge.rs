//! A claim against what was observed. With `vs`, the observed figure is the
//! ratio run / vs: a direction holds when the ratio is beyond 1 by more than
//! the tolerance ("same": within it), a ratio or value when the observed one
//! is within a factor of sqrt(10) of it (the same order of magnitude,
//! rounded), a bound when it holds. All checks held: reproduced; the
//! direction but not the magnitude: direction only; otherwise not reproduced.

use super::scenario::{Direction, Expect};
use crate::results::reproduce::{Expected, Judgement, Row};

/// The tolerance when a claim gives none: 5%, the "few percent" that
/// separates a change from run-to-run noise in LKP's and mmtests' tables.
pub const TOLERANCE: f64 = 0.05;

/// Half an order of magnitude: |log10(observed / expected)| allowed.
const MAGNITUDE: f64 = 0.5;

/// The row for claim `e`, with its run's figure and, if it has one, its
/// comparison run's.
pub fn row(e: &Expect, run_value: f64, vs_value: Option<f64>) -> Row {
    let observed = match vs_value {
        Some(b) => ratio(run_value, b),
        None => run_value,
    };
    let tolerance = e.tolerance.unwrap_or(TOLERANCE);
    let direction = e.direction.map(|d| holds(d, observed, tolerance));
    let magnitude = [e.ratio, e.value]
        .into_iter()
        .flatten()
        .map(|want| same_order(observed, want))
        .chain(e.at_least.map(|min| observed >= min))
        .reduce(|a, b| a && b);
    Row {
        what: e.what.clone(),
        figure: e.figure.clone(),
        run: e.run.clone(),
        vs: e.comparison().map(|(run, fig)| describe(run, fig, e)),
        quote: e.quote.clone(),
        expected: Expected {
            direction: e.direction.map(|d| name(d).to_string()),
            ratio: e.ratio,
            value: e.value,
            at_least: e.at_least,
            tolerance,
        },
        run_value,
        vs_value,
        observed: Some(observed).filter(|o| o.is_finite()),
        verdict: judge(direction, magnitude),
    }
}

/// How a row names its comparison: the run, and the figure when it differs.
fn describe(run: &str, fig: &str, e: &Expect) -> String {
    if fig == e.figure {
        run.to_string()
    } else if run == e.run {
        fig.to_string()
    } else {
        format!("{run} {fig}")
    }
}

fn judge(direction: Option<bool>, magnitude: Option<bool>) -> Judgement {
    match (direction, magnitude) {
        (None, None) => Judgement::Reported,
        (Some(false), _) | (None, Some(false)) => Judgement::NotReproduced,
        (Some(true), Some(false)) => Judgement::DirectionOnly,
        _ => Judgement::Reproduced,
    }
}

/// a / b; 0 / 0 is 1 (no change), x / 0 infinite.
fn ratio(a: f64, b: f64) -> f64 {
    match (a, b) {
        (a, b) if b != 0.0 => a / b,
        (0.0, _) => 1.0,
        _ => f64::INFINITY,
    }
}

fn holds(d: Direction, r: f64, tolerance: f64) -> bool {
    match d {
        Direction::Higher => r > 1.0 + tolerance,
        Direction::Lower => r < 1.0 - tolerance,
        Direction::Same => (r - 1.0).abs() <= tolerance,
    }
}

fn same_order(observed: f64, want: f64) -> bool {
    observed > 0.0 && observed.is_finite() && (observed / want).log10().abs() <= MAGNITUDE
}

pub fn name(d: Direction) -> &'static str {
    match d {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
        Direction::Same => "same",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(direction: Option<Direction>, ratio: Option<f64>) -> Expect {
        Expect {
            what: "w".into(),
            figure: "ctx_switches.total_per_s".into(),
            run: "a".into(),
            vs: Some("b".into()),
            vs_figure: None,
            quote: None,
            direction,
            ratio,
            value: None,
            at_least: None,
            tolerance: None,
        }
    }

    #[test]
    fn direction_and_magnitude_decide_the_verdict() {
        let up = claim(Some(Direction::Higher), Some(4.0));
        assert_eq!(row(&up, 400.0, Some(100.0)).verdict, Judgement::Reproduced);
        assert_eq!(
            row(&up, 10_000.0, Some(100.0)).verdict,
            Judgement::DirectionOnly
        );
        assert_eq!(
            row(&up, 100.0, Some(100.0)).verdict,
            Judgement::NotReproduced
        );
        assert_eq!(
            row(&up, 50.0, Some(100.0)).verdict,
            Judgement::NotReproduced
        );
        let same = claim(Some(Direction::Same), None);
        assert_eq!(
            row(&same, 103.0, Some(100.0)).verdict,
            Judgement::Reproduced
        );
        assert_eq!(
            row(&same, 110.0, Some(100.0)).verdict,
            Judgement::NotReproduced
        );
        let report = claim(None, None);
        assert_eq!(row(&report, 1.0, Some(2.0)).verdict, Judgement::Reported);
        assert_eq!(row(&report, 1.0, Some(2.0)).observed, Some(0.5));
        assert_eq!(row(&report, 1.0, Some(0.0)).observed, None);
    }

    #[test]
    fn values_and_bounds_need_no_comparison_run() {
        let mut e = claim(None, None);
        e.vs = None;
        e.value = Some(160_000.0);
        assert_eq!(row(&e, 90_000.0, None).verdict, Judgement::Reproduced);
        assert_eq!(row(&e, 20_000.0, None).verdict, Judgement::NotReproduced);
        e.value = None;
        e.at_least = Some(0.5);
        assert_eq!(row(&e, 0.7, None).verdict, Judgement::Reproduced);
        assert_eq!(row(&e, 0.2, None).verdict, Judgement::NotReproduced);
    }

    #[test]
    fn zero_over_zero_is_no_change() {
        let lower = claim(Some(Direction::Lower), None);
        assert_eq!(
            row(&lower, 0.0, Some(0.0)).verdict,
            Judgement::NotReproduced
        );
        assert_eq!(row(&lower, 0.0, Some(5.0)).verdict, Judgement::Reproduced);
    }
}
