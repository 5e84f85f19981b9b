//! `rmap-storm sweep --engine sim` on the real binary: the CPUs as the x
//! axis, every point simulated on its CPUs, results that do not depend on
//! how many rayon threads ran the points, plots that name the engine and the
//! CPUs, and bad simulator input as one line and exit 2 with no folder.

mod common;

use rmap_storm::fileio::results::read_sweep;
use rmap_storm::report::csv;
use rmap_storm::results::{EngineKind, XAxis};
use std::path::{Path, PathBuf};
use std::process::Output;

fn sweep(args: &[&str], env: &[(&str, &str)]) -> Output {
    common::rmap_storm_env("sweep", args, env)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Run a sweep into `out` that must succeed.
fn sweep_ok(args: &[&str], out: &Path, env: &[(&str, &str)]) {
    let mut all = args.to_vec();
    all.extend(["--out", out.to_str().unwrap()]);
    let output = sweep(&all, env);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        stderr(&output)
    );
}

/// The text of each `<text>` element of an SVG, trimmed, in order.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            Some(
                t.split_once('>')?
                    .1
                    .split_once("</text>")?
                    .0
                    .trim()
                    .to_string(),
            )
        })
        .collect()
}

/// The acceptance sweep: CPUs 1, 2, 4 on the x axis, four reclaim
/// threads, two locks.
#[test]
fn cpus_are_the_x_axis_and_every_point_is_simulated_on_its_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let args = [
        "models/aim7-fork-storm.toml",
        "--engine",
        "sim",
        "--cpus",
        "1,2,4",
        "--locks",
        "spinlock,rwsem",
        "--threads",
        "4",
        "--duration",
        "5ms",
    ];
    sweep_ok(&args, &out, &[]);
    let results = read_sweep(&out).unwrap();
    assert_eq!(results.sweep.x, XAxis::Cpus(vec![1, 2, 4]));
    assert_eq!(results.sweep.engine.kind, EngineKind::Sim);
    assert_eq!(results.runs.len(), 6);
    for run in &results.runs {
        let (point, report) = (&run.point, &run.report);
        let cpus: u32 = point.x.parse().unwrap();
        assert_eq!(
            (point.x_key.as_str(), point.engine.cpus),
            ("cpus", Some(cpus))
        );
        assert_eq!(report.engine, "sim", "point {}", point.index);
        assert_eq!(report.cpus, cpus, "point {}", point.index);
        assert_eq!(report.sim.as_ref().unwrap().cpus, cpus);
        assert_eq!((report.threads, report.duration_s), (4, 0.005));
    }
    let rows = csv::from_reader(std::fs::File::open(out.join("results.csv")).unwrap()).unwrap();
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!((row.engine.as_str(), row.x_key.as_str()), ("sim", "cpus"));
        assert_eq!(row.cpus.to_string(), row.x, "point {}", row.point);
    }

    let texts = svg_texts(&std::fs::read_to_string(out.join("throughput.svg")).unwrap());
    let title = texts.iter().take_while(|t| *t != "reclaim ops/s");
    let title = title.cloned().collect::<Vec<_>>().join(" ");
    let machine = &results.runs[0].report.sim.as_ref().unwrap().machine;
    assert!(
        title.starts_with(&format!(
            "aim7-fork-storm (sim, 1-4 virtual CPUs of {machine}): "
        )),
        "{title}"
    );
    assert!(title.ends_with("reclaim throughput vs cpus"), "{title}");
    assert!(
        texts.iter().any(|t| t == "virtual CPUs"),
        "the x axis: {texts:?}"
    );
}

/// A sim sweep's files with the fields that are this host's (the
/// simulator's wall time, rate and the process's memory) taken out.
fn without_wall_clock(out: &Path) -> (serde_json::Value, String) {
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    for run in json["runs"].as_array_mut().unwrap() {
        common::strip_wall_clock(run);
    }
    (
        json,
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
    )
}

#[test]
fn rayon_threads_do_not_change_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "models/synchro.toml",
        "--engine",
        "sim",
        "--cpus",
        "1,2,4",
        "--locks",
        "spinlock,qspinlock,rwsem",
        "--threads",
        "4",
        "--duration",
        "2ms",
        "--seed",
        "3",
    ];
    let folder = |threads: &str| {
        let out = dir.path().join(format!("rayon{threads}"));
        sweep_ok(&args, &out, &[("RAYON_NUM_THREADS", threads)]);
        out
    };
    let (one, two) = (folder("1"), folder("2"));
    let (json_one, csv_one) = without_wall_clock(&one);
    let (json_two, csv_two) = without_wall_clock(&two);
    assert!(
        json_one == json_two,
        "results.json differs beyond wall-clock fields"
    );
    assert_eq!(csv_one, csv_two, "results.csv differs");
    // Not a vacuous sweep: the points did different work.
    let events: std::collections::BTreeSet<u64> = json_one["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sim"]["events"].as_u64().unwrap())
        .collect();
    assert!(events.len() > 3, "events per point: {events:?}");
}

#[test]
fn a_fixed_cpu_count_keeps_threads_as_the_x_axis_and_names_the_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let args = [
        "models/synchro.toml",
        "--engine",
        "sim",
        "--cpus",
        "2",
        "--locks",
        "rwsem",
        "--threads",
        "1,2,4",
        "--duration",
        "1ms",
    ];
    sweep_ok(&args, &out, &[]);
    let results = read_sweep(&out).unwrap();
    assert_eq!(results.sweep.x, XAxis::Threads(vec![1, 2, 4]));
    assert!(results.runs.iter().all(|r| r.report.cpus == 2));
    assert_eq!(results.runs[1].point.label(), "rwsem threads=2 cpus=2 #1");
    let texts = svg_texts(&std::fs::read_to_string(out.join("throughput.svg")).unwrap());
    assert!(texts.iter().any(|t| t == "2 virtual CPUs"), "{texts:?}");

    // The same folder with other engine settings is another sweep's.
    for other in [
        &["--preempt", "none"][..],
        &["--cpus", "4"],
        &["--engine", "native"],
    ] {
        let mut changed: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !["--engine", "sim", "--cpus", "2"].contains(a))
            .collect();
        if other[0] != "--engine" {
            changed.extend(["--engine", "sim"]);
        }
        if other[0] != "--cpus" && other[0] != "--engine" {
            changed.extend(["--cpus", "2"]);
        }
        changed.extend(other);
        changed.extend(["--out", out.to_str().unwrap()]);
        let output = sweep(&changed, &[]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{other:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("holds a different sweep"),
            "{other:?}"
        );
    }
}

/// A copy of the default profile with `fault_ns` negative, in `dir`.
fn negative_profile(dir: &Path) -> PathBuf {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/machines/default.toml"),
    )
    .unwrap();
    let edited: Vec<String> = src
        .lines()
        .map(|l| {
            if l.starts_with("fault_ns") {
                "fault_ns = -5.0".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    let path = dir.join("negative.toml");
    std::fs::write(&path, edited.join("\n")).unwrap();
    path
}

#[test]
fn bad_simulator_input_is_one_line_exit_2_and_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let negative = negative_profile(dir.path());
    let negative = negative.to_str().unwrap();
    let missing = dir.path().join("nowhere.toml");
    let missing = missing.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["--cpus", "4"], "--cpus: only with --engine sim".into()),
        (
            vec!["--cpus", "1,2"],
            "--cpus: only with --engine sim".into(),
        ),
        (
            vec!["--preempt", "none"],
            "--preempt: only with --engine sim".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "0"],
            "--cpus: 0 is out of range (allowed: 1..=4096)".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "2,4097"],
            "--cpus: 4097 is out of range (allowed: 1..=4096)".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "1,x"],
            "--cpus: 'x' is not a number (allowed: 1..=4096)".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", ""],
            "--cpus: empty list (allowed: 1..=4096)".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "1,1"],
            "--cpus: 1 listed twice".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "1,2", "--threads", "1,2"],
            "--threads: give one count with several --cpus values".into(),
        ),
        (
            vec![
                "--engine",
                "sim",
                "--cpus",
                "1,2",
                "--vary",
                "world.tasks=10,20",
            ],
            "--vary: not with more than one --cpus value".into(),
        ),
        (
            vec!["--engine", "sim", "--preempt", "lazy"],
            "invalid value 'lazy' for '--preempt".into(),
        ),
        (
            vec!["--engine", "sim", "--machine", negative],
            format!("{negative}: work.fault_ns: -5 is negative"),
        ),
        (
            vec!["--engine", "sim", "--machine", missing],
            format!("{missing}: cannot read"),
        ),
        (
            vec!["--machine", negative],
            format!("{negative}: work.fault_ns: -5 is negative"),
        ),
    ];
    for (extra, want) in &cases {
        let mut args = vec![
            "models/synchro.toml",
            "--locks",
            "rwsem",
            "--duration",
            "1ms",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let output = sweep(&args, &[]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{extra:?}: one line: {err}"
        );
        assert!(
            err.contains(want.as_str()),
            "{extra:?}: want {want:?}, got {err}"
        );
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?} wrote {}", out.display());
    }
}
