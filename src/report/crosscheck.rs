//! The cross-check table: per (model, CPUs, kind) the median of the scaled
//! role's ops/s over the repeats on real threads and on the simulator, and
//! the simulator's error against native (`sim / native - 1`), with the
//! other roles' errors beside it, as markdown, and the markers it goes
//! between in a README.

use super::bootstrap::{Resample, error_interval};
use super::units::{fmt_ns, fmt_rate};
use crate::model::machine::MachineProfile;
use crate::results::crosscheck::{Calibrated, CrossCheck, CrossRow};
use std::fmt::Write as _;

/// The line before the generated block in a README.
pub const BEGIN: &str = "<!-- crosscheck:begin -->";
/// The line after it.
pub const END: &str = "<!-- crosscheck:end -->";

/// The acceptance bound of issue 9: the simulator within ±30% of native.
pub const TOLERANCE_PCT: f64 = 30.0;

/// The median of `samples` (the mean of the middle two for an even count);
/// None for no samples. NaNs sort last, as `f64::total_cmp` orders them.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Half the range of `samples` as a percentage of their median: how far the
/// repeats strayed (`±12%`). None without samples or with a zero median.
pub fn spread_pct(samples: &[f64]) -> Option<f64> {
    let m = median(samples).filter(|m| *m != 0.0)?;
    let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(100.0 * (hi - lo) / 2.0 / m)
}

/// The simulator's error against native, percent: `100 * (sim / native -
/// 1)`. None when native did nothing (no ratio exists).
pub fn error_pct(native: f64, sim: f64) -> Option<f64> {
    (native > 0.0).then(|| 100.0 * (sim / native - 1.0))
}

/// A row's (native median, sim median, error %).
pub fn row_figures(row: &CrossRow) -> (Option<f64>, Option<f64>, Option<f64>) {
    figures(&row.native_ops_per_s, &row.sim_ops_per_s)
}

/// (native median, sim median, error %) of one role's repeats.
fn figures(native: &[f64], sim: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let (native, sim) = (median(native), median(sim));
    let error = native.zip(sim).and_then(|(n, s)| error_pct(n, s));
    (native, sim, error)
}

/// The row's other roles and their errors, reckoned as the row's own:
/// `fork_exit +75%, touch -12%` (`-` for a role native never ran, or for
/// none at all).
pub fn others_cell(row: &CrossRow) -> String {
    if row.others.is_empty() {
        return "-".into();
    }
    let cells: Vec<String> = row
        .others
        .iter()
        .map(
            |(name, r)| match figures(&r.native_ops_per_s, &r.sim_ops_per_s).2 {
                Some(e) => format!("{name} {e:+.0}%"),
                None => format!("{name} -"),
            },
        )
        .collect();
    cells.join(", ")
}

/// The control's error, percent: the native side's second median against
/// its first (`again / native - 1`), as the simulator's is reckoned. None
/// without a control.
pub fn control_error(row: &CrossRow) -> Option<f64> {
    figures(&row.native_ops_per_s, &row.native_again_ops_per_s).2
}

/// What a table with a control says of its two columns.
const CONTROL_NOTE: &str = "Native again: the same seeds run natively a second time, after the \
     simulated side, on the same profile; its error = again / native - 1, the machine against \
     itself, reckoned as the simulator's is: no model's error can be expected to stay below it.\n";

/// A row's 95% bootstrap interval of its error, percent: its repeats
/// drawn as pairs when each pair ran on a profile of its own, each side
/// on its own otherwise.
pub fn row_interval(row: &CrossRow) -> Option<(f64, f64)> {
    let how = match row.paired() {
        true => Resample::Pairs,
        false => Resample::Sides,
    };
    error_interval(&row.native_ops_per_s, &row.sim_ops_per_s, how)
}

/// A row's interval as `+12..+130%`, `-` without one.
fn interval_cell(interval: Option<(f64, f64)>) -> String {
    interval.map_or("-".into(), |(lo, hi)| format!("{lo:+.0}..{hi:+.0}%"))
}

fn rate_with_spread(samples: &[f64]) -> String {
    match (median(samples), spread_pct(samples)) {
        (Some(m), Some(s)) => format!("{} ±{s:.0}%", fmt_rate(m)),
        (Some(m), None) => fmt_rate(m),
        _ => "-".into(),
    }
}

/// The figures of a profile that move most between calibrations minutes
/// apart: vma visit, walk start, touch, idle wake-up, interval between
/// interruptions, ns.
fn drift_figures(m: &MachineProfile) -> [f64; 5] {
    [
        m.work.vma_visit_ns,
        m.work.walk_ns,
        m.work.touch_ns,
        m.sched.wakeup_idle_ns,
        m.sched.noise_interval_ns,
    ]
}

/// What a row's profiles say of [`drift_figures`], as `visit, walk start,
/// touch, idle wake, interrupts every`, each in its unit: the row's one
/// profile's, or the median over its repeats' profiles. None without a
/// profile.
pub fn calibrated_figures(profiles: &[Calibrated]) -> Option<[String; 5]> {
    if profiles.is_empty() {
        return None;
    }
    let figures: Vec<[f64; 5]> = profiles.iter().map(|c| drift_figures(&c.machine)).collect();
    Some(std::array::from_fn(|i| {
        let column: Vec<f64> = figures.iter().map(|f| f[i]).collect();
        let m = median(&column).expect("a profile at least");
        fmt_ns(m.round() as u64)
    }))
}

/// A recalibrated row's five figures as table cells.
fn calibrated_cells(profiles: &[Calibrated]) -> String {
    match calibrated_figures(profiles) {
        Some([visit, walk, touch, wake, noise]) => {
            format!(" {visit} | {walk} | {touch} | {wake} | {noise} |")
        }
        None => " - | - | - | - | - |".into(),
    }
}

/// The table as markdown, with `command` (what made it) and `host` (the
/// machine the native side ran on) above it and a count of the rows within
/// [`TOLERANCE_PCT`] below it.
pub fn render(check: &CrossCheck, command: &str, host: &str) -> String {
    let repeats = check.rows.iter().map(|r| r.seeds.len()).max().unwrap_or(0);
    let mut s = String::new();
    let _ = writeln!(s, "Made by `{command}`");
    let profile = match check.recalibrated {
        None => format!("`{}` ({})", check.machine_file, check.machine_name),
        Some(trials) => {
            let (whose, ran, columns) = match check.per_repeat {
                true => (
                    "each repeat's own profile, calibrated just before its native run",
                    "on which that native run ran too",
                    "the medians over the row's profiles of the",
                ),
                false => (
                    "the row's own profile, calibrated just before its native runs",
                    "on which the native side ran too",
                    "that profile's",
                ),
            };
            format!(
                "{whose} ({trials} trial{} a figure, the model's storm on the row's CPUs; the keys calibrate does not measure from `{}`), \
                 {ran}; the last columns are {columns} vma visit, walk start \
                 (a walk's own work before its first vma), touch, wake-up of an idle CPU and interval between interruptions",
                if trials == 1 { "" } else { "s" },
                check.machine_file,
            )
        }
    };
    let _ = writeln!(
        s,
        "on {host}: native runs pinned to CPUs 0..N-1 with N threads of the scaled role; \
         simulated runs pinned the same way on N virtual CPUs of {profile} (preempt {}), the same seeds. \
         Medians of {repeats} repeats of {} s each; `±` is half the repeats' range over the median; \
         error = sim / native - 1; 95% interval: the error's percentile bootstrap over the repeats{} \
         (whether the repeats could have drawn an error inside the bound); other roles: the model's other roles in the same runs, their errors reckoned alike \
         (shown, not counted).",
        check.preempt,
        check.duration_s,
        if check.per_repeat {
            ", drawn as pairs (a native run with its simulated twin)"
        } else {
            ""
        },
    );
    if check.control {
        s.push_str(CONTROL_NOTE);
    }
    s.push('\n');
    let mut head = String::from(
        "| model | role (ops/s) | CPUs | kind | native | sim | error | 95% interval |",
    );
    let mut rule = String::from("|---|---|---:|---|---:|---:|---:|---:|");
    if check.control {
        head.push_str(" native again | its error |");
        rule.push_str("---:|---:|");
    }
    head.push_str(" other roles |");
    rule.push_str("---|");
    if check.recalibrated.is_some() {
        head.push_str(" visit | walk start | touch | idle wake | interrupts every |");
        rule.push_str("---:|---:|---:|---:|---:|");
    }
    let _ = writeln!(s, "{head}\n{rule}");
    let (mut within, mut surely_out, mut itself_within) = (0, 0, 0);
    for row in &check.rows {
        // Counted as printed (whole percent), so a row that reads +30% is
        // one of those the count says are within ±30%.
        let (_, _, error) = row_figures(row);
        let error = error.map(f64::round);
        let interval = row_interval(row).map(|(lo, hi)| (lo.round(), hi.round()));
        if error.is_some_and(|e| e.abs() <= TOLERANCE_PCT) {
            within += 1;
        } else if interval.is_some_and(|(lo, hi)| lo > TOLERANCE_PCT || hi < -TOLERANCE_PCT) {
            surely_out += 1;
        }
        let error = match (&row.failed, error) {
            (Some(_), _) => "failed".into(),
            (None, e) => e.map_or("-".into(), |e| format!("{e:+.0}%")),
        };
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} | {} | {error} | {} |",
            row.model,
            row.role,
            row.cpus,
            row.lock.name(),
            rate_with_spread(&row.native_ops_per_s),
            rate_with_spread(&row.sim_ops_per_s),
            interval_cell(interval),
        );
        if check.control {
            let again = control_error(row).map(f64::round);
            itself_within += usize::from(again.is_some_and(|e| e.abs() <= TOLERANCE_PCT));
            let again = again.map_or("-".into(), |e| format!("{e:+.0}%"));
            let _ = write!(
                s,
                " {} | {again} |",
                rate_with_spread(&row.native_again_ops_per_s)
            );
        }
        let _ = write!(s, " {} |", others_cell(row));
        if check.recalibrated.is_some() {
            s.push_str(&calibrated_cells(&row.calibrated));
        }
        s.push('\n');
    }
    let failed: Vec<&CrossRow> = check.rows.iter().filter(|r| r.failed.is_some()).collect();
    let _ = write!(
        s,
        "\n{within} of {} rows within ±{TOLERANCE_PCT:.0}%",
        check.rows.len()
    );
    let outside = check.rows.len() - within - failed.len();
    if outside > 0 {
        let _ = write!(
            s,
            "; of the {outside} outside, {surely_out} with the whole 95% interval outside"
        );
    }
    if check.control {
        let _ = write!(
            s,
            "; the native side against itself within ±{TOLERANCE_PCT:.0}% in {itself_within}"
        );
    }
    match failed.len() {
        0 => s.push_str(".\n"),
        n => {
            let _ = writeln!(s, "; {n} failed, with no figures:\n");
            for row in failed {
                let _ = writeln!(
                    s,
                    "- {} {} CPU{} {}: {}",
                    row.model,
                    row.cpus,
                    if row.cpus == 1 { "" } else { "s" },
                    row.lock.name(),
                    row.failed.as_deref().unwrap_or_default()
                );
            }
        }
    }
    s
}

/// How many of the check's rows failed.
pub fn failed_rows(check: &CrossCheck) -> usize {
    check.rows.iter().filter(|r| r.failed.is_some()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::LockKind;

    fn row(native: &[f64], sim: &[f64]) -> CrossRow {
        CrossRow {
            model: "aim7-fork-storm".into(),
            role: "reclaim".into(),
            cpus: 2,
            lock: LockKind::Qspinlock,
            seeds: (0..native.len() as u64).collect(),
            native_ops_per_s: native.to_vec(),
            sim_ops_per_s: sim.to_vec(),
            native_again_ops_per_s: Vec::new(),
            others: Default::default(),
            calibrated: Vec::new(),
            failed: None,
        }
    }

    /// A check of `rows` on the default profile, 2 s runs, preempt user.
    fn on_base(rows: Vec<CrossRow>) -> CrossCheck {
        CrossCheck {
            machine_file: "models/machines/default.toml".into(),
            machine_name: "base".into(),
            duration_s: 2.0,
            preempt: "user".into(),
            recalibrated: None,
            per_repeat: false,
            control: false,
            rows,
        }
    }

    #[test]
    fn median_of_odd_even_and_no_samples() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 10.0]), Some(3.0));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn spread_is_half_the_range_over_the_median() {
        // range 80..120 around 100: ±20%.
        assert_eq!(spread_pct(&[100.0, 80.0, 120.0]), Some(20.0));
        assert_eq!(spread_pct(&[3.0]), Some(0.0));
        assert_eq!(spread_pct(&[0.0, 0.0, 1.0]), None, "zero median");
    }

    #[test]
    fn error_is_sim_over_native_minus_one() {
        assert_eq!(error_pct(200.0, 150.0), Some(-25.0));
        let up = error_pct(100.0, 130.0).unwrap();
        assert!((up - 30.0).abs() < 1e-9, "{up}");
        assert_eq!(error_pct(0.0, 5.0), None);
        // Medians, not means: one wild native repeat does not move it.
        let r = row(&[100.0, 1e9, 90.0, 110.0, 100.0], &[80.0; 5]);
        let (native, sim, error) = row_figures(&r);
        assert_eq!((native, sim), (Some(100.0), Some(80.0)));
        assert!((error.unwrap() + 20.0).abs() < 1e-9, "{error:?}");
    }

    #[test]
    fn the_table_has_a_row_per_point_with_both_medians_and_the_error() {
        let check = CrossCheck {
            machine_file: "models/machines/local.toml".into(),
            machine_name: "this machine".into(),
            duration_s: 1.0,
            preempt: "voluntary".into(),
            recalibrated: None,
            per_repeat: false,
            control: false,
            rows: vec![
                row(&[1.0e6, 1.2e6, 0.8e6], &[1.5e6, 1.5e6, 1.5e6]),
                row(&[20_000.0], &[21_000.0]),
                row(&[0.0], &[3.0]),
                row(&[100_000.0], &[69_600.0]),
                row(&[100_000.0], &[130_400.0]),
                row(&[100_000.0], &[130_600.0]),
            ],
        };
        let text = render(
            &check,
            "rmap-storm crosscheck --repeats 3",
            "AMD EPYC (2 CPUs)",
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains("`rmap-storm crosscheck --repeats 3`"),
            "{text}"
        );
        assert!(
            lines[1].contains("on AMD EPYC (2 CPUs)") && lines[1].contains("Medians of 3 repeats")
        );
        assert!(
            lines[1].contains(
                "virtual CPUs of `models/machines/local.toml` (this machine) (preempt voluntary)"
            ),
            "{text}"
        );
        let rows: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with("| aim7"))
            .collect();
        assert_eq!(
            rows,
            [
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 1.00M/s ±20% | 1.50M/s ±0% | +50% | +25..+88% | - |",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 20.0k/s ±0% | 21.0k/s ±0% | +5% | +5..+5% | - |",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 0.0/s | 3.0/s ±0% | - | - | - |",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 100.0k/s ±0% | 69.6k/s ±0% | -30% | -30..-30% | - |",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 100.0k/s ±0% | 130.4k/s ±0% | +30% | +30..+30% | - |",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 100.0k/s ±0% | 130.6k/s ±0% | +31% | +31..+31% | - |",
            ]
        );
        // The rows that read -30% and +30% (30.4% under and 30.4% over)
        // count as within, as printed. Of the three outside only the +31%
        // row is wholly outside: the +50% row's native medians resample to
        // 0.8M-1.2M, so its interval (+25..+88%) reaches inside, and the
        // row native did nothing in has no interval.
        assert!(
            text.ends_with(
                "\n3 of 6 rows within ±30%; of the 3 outside, 1 with the whole 95% interval outside.\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_other_roles_are_shown_with_their_own_errors_and_not_counted() {
        use crate::results::crosscheck::RoleRates;
        let mut r = row(&[100.0; 3], &[100.0; 3]);
        r.others.insert(
            "touch".into(),
            RoleRates {
                native_ops_per_s: vec![0.0; 3],
                sim_ops_per_s: vec![5.0; 3],
            },
        );
        r.others.insert(
            "fork_exit".into(),
            RoleRates {
                native_ops_per_s: vec![100.0, 110.0, 300.0],
                sim_ops_per_s: vec![192.5, 150.0, 250.0],
            },
        );
        // Medians 110 and 192.5: +75% (the means would say +16%); by name,
        // whatever the insertion order.
        assert_eq!(others_cell(&r), "fork_exit +75%, touch -");
        let check = on_base(vec![r]);
        let text = render(&check, "rmap-storm crosscheck", "Xeon");
        assert!(
            text.contains("| +0% | +0..+0% | fork_exit +75%, touch - |"),
            "{text}"
        );
        assert!(text.ends_with("\n1 of 1 rows within ±30%.\n"), "{text}");
    }

    #[test]
    fn a_control_shows_the_native_sides_second_median_and_counts_it_apart() {
        // The simulator within the bound in both rows; the machine against
        // itself within it in the first (+10%) and not the second (-40%).
        let mut steady = row(&[100.0, 110.0, 90.0], &[120.0; 3]);
        steady.native_again_ops_per_s = vec![110.0, 120.0, 100.0];
        let mut drifting = row(&[100.0; 3], &[80.0; 3]);
        drifting.native_again_ops_per_s = vec![60.0, 50.0, 70.0];
        assert_eq!(control_error(&drifting).map(f64::round), Some(-40.0));
        assert_eq!(control_error(&row(&[1.0], &[1.0])), None, "no control");
        let mut check = on_base(vec![steady, drifting]);
        check.control = true;
        let text = render(&check, "rmap-storm crosscheck --control", "EPYC");
        assert!(
            text.contains("| error | 95% interval | native again | its error | other roles |"),
            "{text}"
        );
        assert!(text.contains("Native again: the same seeds"), "{text}");
        assert!(
            text.contains("| +20% | +9..+33% | 110.0/s ±9% | +10% | - |"),
            "{text}"
        );
        assert!(text.contains("| 60.0/s ±17% | -40% | - |"), "{text}");
        assert!(
            text.ends_with(
                "\n2 of 2 rows within ±30%; the native side against itself within ±30% in 1.\n"
            ),
            "{text}"
        );
        // Without a control, neither the columns nor the count.
        check.control = false;
        let text = render(&check, "rmap-storm crosscheck", "EPYC");
        assert!(!text.contains("native again") && !text.contains("against itself"));
    }

    #[test]
    fn a_failed_row_reads_failed_and_its_reason_is_listed_under_the_table() {
        let mut failed = row(&[], &[]);
        failed.cpus = 1;
        failed.lock = LockKind::Rwlock;
        failed.failed = Some("calibrate: the storm did not settle".into());
        let check = on_base(vec![row(&[100.0], &[110.0]), failed]);
        assert_eq!(failed_rows(&check), 1);
        let text = render(&check, "rmap-storm crosscheck", "Xeon");
        assert!(
            text.contains("| aim7-fork-storm | reclaim | 1 | rwlock | - | - | failed | - | - |"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "\n1 of 2 rows within ±30%; 1 failed, with no figures:\n\n\
                 - aim7-fork-storm 1 CPU rwlock: calibrate: the storm did not settle\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_recalibrated_table_says_so_and_shows_each_rows_figures() {
        let mut calibrated = row(&[100_000.0], &[110_000.0]);
        let mut machine =
            crate::model::machine::load(std::path::Path::new("models/machines/default.toml"))
                .unwrap();
        machine.work.vma_visit_ns = 293.4;
        machine.work.walk_ns = 151.0;
        machine.work.touch_ns = 271.0;
        machine.sched.wakeup_idle_ns = 44_460.0;
        machine.sched.noise_interval_ns = 1_291_514.0;
        calibrated.calibrated = vec![Calibrated {
            machine,
            notes: Default::default(),
        }];
        let check = CrossCheck {
            recalibrated: Some(3),
            ..on_base(vec![calibrated, row(&[1.0], &[1.0])])
        };
        let text = render(&check, "rmap-storm crosscheck --recalibrate 3", "Xeon");
        assert!(
            text.contains("virtual CPUs of the row's own profile, calibrated just before its native runs (3 trials a figure, the model's storm on the row's CPUs; the keys calibrate does not measure from `models/machines/default.toml`)"),
            "{text}"
        );
        assert!(
            !text.contains("(base)"),
            "no one profile ran every row:\n{text}"
        );
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(
            rows,
            [
                "| model | role (ops/s) | CPUs | kind | native | sim | error | 95% interval | other roles | visit | walk start | touch | idle wake | interrupts every |",
                "|---|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 100.0k/s ±0% | 110.0k/s ±0% | +10% | +10..+10% | - | 293ns | 151ns | 271ns | 44.5us | 1.29ms |",
                "| aim7-fork-storm | reclaim | 2 | qspinlock | 1.0/s ±0% | 1.0/s ±0% | +0% | +0..+0% | - | - | - | - | - | - |",
            ]
        );
    }

    /// With a profile per repeat, a row shows each figure's median over
    /// its repeats' profiles, and the header says whose profile each run
    /// ran on.
    #[test]
    fn a_table_calibrated_every_repeat_shows_the_medians_of_the_rows_profiles() {
        let base =
            crate::model::machine::load(std::path::Path::new("models/machines/default.toml"))
                .unwrap();
        let profile = |visit: f64, wake: f64| {
            let mut machine = base.clone();
            machine.work.vma_visit_ns = visit;
            machine.work.walk_ns = 100.0;
            machine.work.touch_ns = 200.0;
            machine.sched.wakeup_idle_ns = wake;
            machine.sched.noise_interval_ns = 2_000_000.0;
            Calibrated {
                machine,
                notes: Default::default(),
            }
        };
        let mut r = row(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]);
        // Visits 150, 400, 200 (median 200); wake-ups 30, 10, 20 us (20).
        r.calibrated = vec![
            profile(150.0, 30_000.0),
            profile(400.0, 10_000.0),
            profile(200.0, 20_000.0),
        ];
        let check = CrossCheck {
            recalibrated: Some(1),
            per_repeat: true,
            ..on_base(vec![r])
        };
        let text = render(&check, "rmap-storm crosscheck --recalibrate 1", "EPYC");
        assert!(
            text.contains("virtual CPUs of each repeat's own profile, calibrated just before its native run (1 trial a figure,"),
            "{text}"
        );
        assert!(
            text.contains("on which that native run ran too; the last columns are the medians over the row's profiles of the vma visit"),
            "{text}"
        );
        // Each pair's runs agree, so every resample of pairs does; drawn
        // side by side, 1.0 against 3.0 would read -67%..+200%.
        assert!(
            text.contains("| +0% | +0..+0% | - | 200ns | 100ns | 200ns | 20.0us | 2.00ms |"),
            "{text}"
        );
        assert!(
            text.contains(
                "over the repeats, drawn as pairs (a native run with its simulated twin)"
            ),
            "{text}"
        );
    }
}
