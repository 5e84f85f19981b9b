//! `rmap-storm run` on the real binary: every shipped model runs and reports,
//! the lock under test behaves as its kind says, bad input is one line and
//! exit 2 with nothing written.

use rmap_storm::results::{RunReport, Verdict};
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
        .arg("run")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_json(args: &[&str]) -> RunReport {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut all = args.to_vec();
    all.extend(["--json", json.to_str().unwrap()]);
    let out = run(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{:?}: {}",
        args,
        text(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn every_shipped_model_runs_for_200ms_and_reports() {
    let mut models: Vec<_> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("models"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
    models.sort();
    assert!(models.len() >= 7, "a model per seed scenario: {models:?}");
    for model in models {
        let m = model.to_str().unwrap();
        let r = run_json(&[m, "--duration", "200ms"]);
        assert_eq!((r.schema, r.engine.as_str()), (1, "native"), "{m}");
        assert!(
            !r.roles.is_empty() && r.roles.values().all(|role| role.threads > 0),
            "{m}"
        );
        assert!(
            r.roles.values().map(|role| role.ops).sum::<u64>() > 0,
            "{m}: nothing ran"
        );
        assert!(
            (0.15..2.0).contains(&r.duration_s),
            "{m}: ran {} s",
            r.duration_s
        );
        for (class, c) in &r.lock_stats {
            assert!(
                (0.0..=1.0).contains(&c.wait_share),
                "{m}: {class} wait share {}",
                c.wait_share
            );
        }
    }
}

/// Two reclaim threads alone on the AIM7 root: readers overlap inside a
/// reader-writer lock and never inside an exclusive one.
#[test]
fn readers_share_the_root_only_under_reader_writer_kinds() {
    let alone = [
        "--threads",
        "2",
        "--duration",
        "300ms",
        "--set",
        "world.tasks=2000",
        "--set",
        "workload.fork_exit.threads=0",
        "--set",
        "workload.touch.threads=0",
    ];
    for (kind, shared) in [
        ("spinlock", false),
        ("mutex", false),
        ("rwlock", true),
        ("rwsem", true),
    ] {
        let mut args = vec!["--lock", kind];
        args.extend(alone);
        let r = run_json(&args);
        let readers = r.lock_stats["anon_vma"].mean_readers;
        if shared {
            assert!(readers > 1.0, "{kind}: readers inside {readers}");
        } else {
            assert_eq!(readers, 1.0, "{kind}: readers inside {readers}");
        }
        assert_eq!(r.verdict, Verdict::Ok, "{kind}");
    }
}

#[test]
fn csv_has_one_row_per_role() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let out = run(&[
        "models/maps-monitor.toml",
        "--duration",
        "100ms",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = body.lines().collect();
    assert_eq!(
        rows.len(),
        1 + 3,
        "header + monitor, mprotect, touch:\n{body}"
    );
    assert!(rows[0].starts_with("point,model,engine,lock,"));
}

#[test]
fn bad_input_is_one_line_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["models/no-such.toml"], "models/no-such.toml: cannot read"),
        (
            &["--lock", "bkl"],
            "--lock: unknown lock kind 'bkl' (valid: spinlock,",
        ),
        (
            &["--threads", "0"],
            "--threads: 0 is out of range (allowed: 1..=4096)",
        ),
        (&["--duration", "0s"], "--duration: '0s' is out of range"),
        (&["--pin", "4096"], "--pin: CPU 4096 does not exist"),
        (
            &["--set", "world.tasks=0"],
            "world.tasks: 0 is out of range (allowed: 1..=1000000)",
        ),
        (
            &["--set", "workload.touch.try_lock=true"],
            "workload.touch.try_lock: unknown key for this role",
        ),
        (
            &[
                "--set",
                "workload.reclaim.threads=0",
                "--set",
                "workload.fork_exit.threads=0",
                "--set",
                "workload.touch.threads=0",
            ],
            "no role has threads",
        ),
    ];
    for (args, want) in cases {
        let mut all = args.to_vec();
        all.extend(
            ["--duration", "50ms"]
                .iter()
                .filter(|_| !args.contains(&"--duration")),
        );
        all.extend(["--json", j]);
        let out = run(&all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got:\n{err}");
        assert!(err.contains(want), "{args:?}: expected '{want}' in: {err}");
        assert!(!json.exists(), "{args:?}: wrote {j}");
        assert!(out.stdout.is_empty(), "{args:?}: printed a report");
    }
}
