//! `rmap-storm torture` through the real binary: every kind passes a short
//! synchro-test style run, and bad input is one line on stderr with exit 2.

mod common;

use common::text;
use rmap_storm::locks::LockKind;
use std::process::{Command, Output};

fn torture(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
        .arg("torture")
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The line of `stdout` starting with `label`, e.g. locktorture's `Writes:`.
fn line<'a>(stdout: &'a str, label: &str) -> Option<&'a str> {
    stdout.lines().find(|l| l.starts_with(label))
}

/// A short version of the acceptance run (which uses 2s): seed 002's 10
/// readers, 2 writers and a downgrader on one lock. Kinds run one after the
/// other so they do not fight each other for the machine's 2 cores.
#[test]
fn every_kind_passes_ten_readers_two_writers_one_downgrader() {
    let mut failures = Vec::new();
    for kind in LockKind::ALL {
        let out = torture(&[
            "--lock",
            kind.name(),
            "--readers",
            "10",
            "--writers",
            "2",
            "--downgraders",
            "1",
            "--duration",
            "200ms",
        ]);
        let stdout = text(&out.stdout);
        let ok = out.status.code() == Some(0)
            && [
                line(&stdout, "Writes:  Total: "),
                line(&stdout, "Reads :  Total: "),
            ]
            .iter()
            .all(|l| l.is_some_and(|l| l.ends_with("Fail: 0")))
            && stdout.starts_with(&format!("torture: lock {kind},"))
            // Exclusive-only kinds put all 13 threads in the MTX column.
            && (line(&stdout, "  0   0  10   2   1 -   2/2 ").is_some()
                || line(&stdout, " 13   0  10   2   1 -   2/2 ").is_some());
        if !ok {
            failures.push(format!(
                "--- {kind}: exit {:?}\n{stdout}{}",
                out.status.code(),
                text(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn without_lock_the_build_default_kind_runs() {
    let out = torture(&["--readers", "1", "--writers", "1", "--duration", "20ms"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let want = format!("torture: lock {},", LockKind::default_kind());
    assert!(stdout.starts_with(&want), "expected {want}\n{stdout}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--lock", "bkl", "--readers", "1"],
            "--lock: unknown lock kind 'bkl'",
        ),
        (
            &["--readers", "-1"],
            "--readers: -1 is out of range (allowed 0..=4096)",
        ),
        (&["--writers", "5000"], "--writers: 5000 is out of range"),
        (
            &["--readers", "4000", "--writers", "97"],
            "4097 threads is out of range (allowed 1..=4096)",
        ),
        (&[], "0 threads is out of range"),
        (
            &["--readers", "1", "--duration", "0s"],
            "--duration: '0s' is out of range",
        ),
        (
            &["--readers", "1", "--duration", "-5s"],
            "--duration: '-5s' is not a duration",
        ),
        (
            &["--readers", "1", "--duration", "soon"],
            "--duration: 'soon' is not a duration",
        ),
        (
            &["--readers", "1", "--load-us", "1000"],
            "--load-us: 1000 is out of range (allowed 0..=999)",
        ),
        (
            &["--readers", "1", "--interval-us", "-2"],
            "--interval-us: -2 is out of range",
        ),
        (
            &["--readers", "1", "--cpus", "8"],
            "--cpus: only with --engine sim",
        ),
        (
            &["--readers", "1", "--engine", "sim", "--cpus", "0"],
            "--cpus: 0 is out of range (allowed: 1..=4096)",
        ),
        (
            &["--readers", "1", "--engine", "sim", "--cpus", "4097"],
            "--cpus: 4097 is out of range (allowed: 1..=4096)",
        ),
        (
            &[
                "--readers",
                "1",
                "--engine",
                "sim",
                "--preempt",
                "sometimes",
            ],
            "invalid value 'sometimes' for '--preempt",
        ),
        (
            &[
                "--readers",
                "1",
                "--engine",
                "sim",
                "--machine",
                "/nonexistent.toml",
            ],
            "/nonexistent.toml: cannot read",
        ),
    ];
    for (args, want) in cases {
        let out = torture(args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?}: not one line:\n{stderr}"
        );
        assert!(
            stderr.contains(want),
            "{args:?}\nexpected: {want}\nactual:   {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed a report");
    }
}

#[test]
fn unknown_kind_and_help_name_every_valid_kind() {
    let bad = text(&torture(&["--lock", "bkl", "--readers", "1"]).stderr);
    let help = text(&torture(&["--help"]).stdout);
    for kind in LockKind::ALL {
        assert!(bad.contains(kind.name()), "error omits {kind}: {bad}");
        assert!(help.contains(kind.name()), "--help omits {kind}:\n{help}");
    }
}

/// The report without the simulator's wall-clock figures.
fn without_wall(report: &str) -> String {
    report
        .lines()
        .map(|l| {
            if l.starts_with("sim:") {
                l.split(';').next().unwrap_or(l).to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_simulated_run_reports_virtual_time_and_is_the_same_every_time() {
    let args = [
        "--lock",
        "rwsem",
        "--readers",
        "4",
        "--writers",
        "2",
        "--downgraders",
        "1",
        "--engine",
        "sim",
        "--cpus",
        "8",
        "--duration",
        "5ms",
        "--seed",
        "3",
    ];
    let (a, b) = (torture(&args), torture(&args));
    assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
    let (a, b) = (text(&a.stdout), text(&b.stdout));
    assert!(
        a.contains("(virtual)") && a.contains("sim: 8 virtual CPUs"),
        "{a}"
    );
    assert!(a.contains("Fail: 0"), "{a}");
    assert_eq!(without_wall(&a), without_wall(&b));
}
