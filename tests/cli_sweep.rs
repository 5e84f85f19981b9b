//! The sweep, plot, compare and merge commands on the real binary.

mod sweep_fake;

use indicatif::ProgressBar;
use rmap_storm::results::{Shard, SweepParams};
use rmap_storm::sweep;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rmap_storm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Exit status 2 and exactly one line on stderr, containing `expected`.
fn assert_usage(output: &Output, expected: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr:\n{err}");
    assert_eq!(err.lines().count(), 1, "stderr:\n{err}");
    assert!(
        err.starts_with("rmap-storm: ") && err.contains(expected),
        "expected '{expected}' in:\n{err}"
    );
}

#[test]
fn bad_sweep_input_is_one_line_exit_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();
    let cases: [(&[&str], &str); 11] = [
        (
            &["--locks", ""],
            "--locks: empty lock list (valid: tas, spinlock,",
        ),
        (
            &["--locks", "spinlock,bkl"],
            "--locks: unknown lock kind 'bkl' (valid: tas, spinlock,",
        ),
        (&["--locks", "rwsem,rwsem"], "--locks: rwsem listed twice"),
        (
            &["--threads", "1,0,4"],
            "--threads: 0 is not a thread count (allowed: 1 or more)",
        ),
        (
            &["--threads", "1,x"],
            "--threads: 'x' is not a thread count",
        ),
        (
            &["--shard", "3/2"],
            "--shard: '3/2' is not a shard I/N with 1 <= I <= N",
        ),
        (&["--shard", "0/2"], "--shard: '0/2' is not a shard I/N"),
        (
            &["--vary", "world.tasks="],
            "--vary world.tasks: needs values",
        ),
        (
            &["--vary", "world.tasks=1,2", "--threads", "1,2"],
            "--threads: give one count with --vary",
        ),
        (
            &["--duration", "0s"],
            "--duration: '0s' is out of range (allowed: 1ms..=24h)",
        ),
        (
            &["--repeat", "0"],
            "--repeat: 0 repeats (allowed: 1 or more)",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["sweep", "models/aim7-fork-storm.toml", "--out", out_arg];
        args.extend(extra);
        assert_usage(&rmap_storm(&args), expected);
        assert!(!out.exists(), "{extra:?} wrote {}", out.display());
    }

    let file = dir.path().join("a-file");
    std::fs::write(&file, "keep me").unwrap();
    let output = rmap_storm(&[
        "sweep",
        "m.toml",
        "--locks",
        "rwsem",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_usage(&output, "a-file: exists and is not a folder");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

/// A sweep folder made by the library with the fake engine.
fn sweep_folder(dir: &Path, name: &str, shard: Option<Shard>) -> PathBuf {
    let params = SweepParams {
        shard,
        ..sweep_fake::params()
    };
    let out = dir.join(name);
    let runner = sweep_fake::report;
    sweep::run(&params, &out, &runner, &ProgressBar::hidden()).unwrap();
    out
}

#[test]
fn plot_writes_png_and_svg_and_rejects_an_unknown_role() {
    let dir = tempfile::tempdir().unwrap();
    let folder = sweep_folder(dir.path(), "sweep", None);
    let plots = dir.path().join("plots");
    let output = rmap_storm(&[
        "plot",
        folder.to_str().unwrap(),
        "--out",
        plots.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(printed.lines().count(), 8);
    for name in ["throughput", "latency_p99", "ctx_switches", "wait_share"] {
        for ext in ["png", "svg"] {
            let path = plots.join(format!("{name}.{ext}"));
            assert!(
                std::fs::metadata(&path).unwrap().len() > 1000,
                "{}",
                path.display()
            );
        }
    }

    let output = rmap_storm(&["plot", folder.to_str().unwrap(), "--role", "kswapd"]);
    assert_usage(
        &output,
        "--role kswapd: no run has this role (roles: fork-exit, reclaim)",
    );
    assert!(!folder.join("throughput.png").exists());
    let missing = dir.path().join("missing");
    assert_usage(
        &rmap_storm(&["plot", missing.to_str().unwrap()]),
        "missing: cannot read",
    );
}

#[test]
fn compare_of_a_sweep_with_itself_is_all_zero_without_marks() {
    let dir = tempfile::tempdir().unwrap();
    let folder = sweep_folder(dir.path(), "sweep", None);
    let path = folder.to_str().unwrap();
    let output = rmap_storm(&["compare", path, path]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8(output.stdout).unwrap();
    let mut lines = table.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        ["base", "±stddev%", "%change", "new", "±stddev%", "metric"]
    );
    let rows: Vec<&str> = lines.take_while(|l| !l.starts_with("! changed")).collect();
    assert!(rows.len() > 100);
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((cells.len(), cells[2]), (6, "0.0%"), "{row}");
    }
}

#[test]
fn merged_shards_give_the_unsharded_points() {
    let dir = tempfile::tempdir().unwrap();
    let whole = sweep_folder(dir.path(), "whole", None);
    let shard1 = sweep_folder(dir.path(), "s1", Some(Shard { index: 1, count: 2 }));
    let shard2 = sweep_folder(dir.path(), "s2", Some(Shard { index: 2, count: 2 }));
    let merged = dir.path().join("merged");
    let output = rmap_storm(&[
        "merge",
        shard1.to_str().unwrap(),
        shard2.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(
        printed.starts_with("merged 18 of 18 points into"),
        "{printed}"
    );
    let load = |p: &Path| rmap_storm::fileio::results::read_sweep(p).unwrap();
    assert_eq!(load(&merged), load(&whole));
    assert!(merged.join("throughput.png").exists() && merged.join("results.csv").exists());

    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let output = rmap_storm(&[
        "merge",
        shard1.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_usage(&output, "exists and is not a folder");
}
