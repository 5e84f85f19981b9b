//! `rmap-storm run` on the real binary: every shipped model runs and reports,
//! the lock under test behaves as its kind says, bad input is one line and
//! exit 2 with nothing written.

mod common;

use common::text;
use rmap_storm::results::{RunReport, SCHEMA, Verdict};
use std::path::Path;
use std::process::Output;

fn run(args: &[&str]) -> Output {
    common::rmap_storm("run", args)
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
    let models = common::shipped_models();
    assert!(models.len() >= 7, "a model per seed scenario: {models:?}");
    for model in models {
        let m = model.to_str().unwrap();
        let r = run_json(&[m, "--duration", "200ms"]);
        assert_eq!((r.schema, r.engine.as_str()), (SCHEMA, "native"), "{m}");
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
    // Today's columns in today's order, then the ones schema 2 added, then
    // the run's CPUs and the role's CPU time.
    assert_eq!(
        rows[0],
        "point,model,engine,lock,x_key,x,repeat,seed,duration_s,role,threads,ops,ops_per_s,\
         latency_p50_ns,latency_p99_ns,latency_p999_ns,latency_max_ns,ctx_voluntary_per_s,\
         ctx_involuntary_per_s,lock_class,wait_share,contended_pct,verdict,failed,gave_up,cpus,\
         cpus_used"
    );
}

/// The key paths of a run's JSON, with map keys (role, lock class, event
/// names) as `*`.
fn key_shapes(value: &serde_json::Value) -> std::collections::BTreeSet<String> {
    fn walk(
        path: &str,
        value: &serde_json::Value,
        in_map: bool,
        out: &mut std::collections::BTreeSet<String>,
    ) {
        let Some(object) = value.as_object() else {
            out.insert(path.to_string());
            return;
        };
        for (key, inner) in object {
            let part = if in_map { "*" } else { key.as_str() };
            let name = if path.is_empty() {
                part.to_string()
            } else {
                format!("{path}.{part}")
            };
            let map =
                !in_map && ["roles", "fairness", "lock_stats", "events"].contains(&key.as_str());
            walk(&name, inner, map, out);
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk("", value, false, &mut out);
    out
}

/// The run JSON keeps every key it had before `failed` was reported (the
/// set below is the one the schema-1 build wrote, with role, lock class and
/// event names folded to `*`) and adds only the two outcome counts and the
/// run's CPUs (which a reader may ignore: it reads as 0 from older files).
#[test]
fn run_json_keeps_its_keys_and_adds_only_the_outcome_counts() {
    const SCHEMA_1: &[&str] = &[
        "ctx_switches.involuntary_per_s",
        "ctx_switches.voluntary_per_s",
        "duration_s",
        "engine",
        "fairness.*.jain",
        "fairness.*.max",
        "fairness.*.min",
        "fairness.*.starved_mark",
        "lock",
        "lock_stats.*.acquire_read",
        "lock_stats.*.acquire_write",
        "lock_stats.*.contended_pct",
        "lock_stats.*.events.*",
        "lock_stats.*.max_wait_ns",
        "lock_stats.*.mean_readers",
        "lock_stats.*.wait_share",
        "memory.direct_reclaim_entries",
        "memory.pages_reclaimed",
        "memory.pages_reclaimed_per_s",
        "memory.useful_ops_per_s",
        "model",
        "overrides",
        "roles.*.direct_reclaim",
        "roles.*.direct_reclaim_share",
        "roles.*.latency_ns.max",
        "roles.*.latency_ns.p50",
        "roles.*.latency_ns.p99",
        "roles.*.latency_ns.p999",
        "roles.*.ops",
        "roles.*.ops_per_s",
        "roles.*.threads",
        "roles.*.vmas_per_op",
        "schema",
        "seed",
        "threads",
        "verdict.progress",
    ];
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    // The lock is named: with --all-features the default kind is tas, under
    // which this model's 5 ms fault holds can starve a role, and the verdict
    // then names it (verdict.reason and verdict.role, only when not ok).
    let out = run(&[
        "models/maps-monitor.toml",
        "--lock",
        "rwsem",
        "--duration",
        "100ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(value["schema"], 2, "a key was added: schema 2");
    let mut now = key_shapes(&value);
    if value["verdict"]["progress"] != "ok" {
        for k in ["verdict.reason", "verdict.role"] {
            assert!(now.remove(k), "a verdict that is not ok names {k}");
        }
    }
    let before: std::collections::BTreeSet<String> =
        SCHEMA_1.iter().map(|k| k.to_string()).collect();
    let lost: Vec<&String> = before.difference(&now).collect();
    let added: Vec<&String> = now.difference(&before).collect();
    assert!(lost.is_empty(), "keys gone: {lost:?}");
    assert_eq!(
        added,
        [
            "cpus",
            "memory.lru_lock_wait_share",
            "memory.pages_scanned",
            "memory.reclaimed_by_second",
            "memory.scanned_per_reclaimed",
            "memory.swap_cache_hits_per_s",
            "memory.swapins_per_s",
            "memory.throttled",
            "memory.vma_lock.abort",
            "memory.vma_lock.miss",
            "memory.vma_lock.retry",
            "memory.vma_lock.success",
            "roles.*.cpus_used",
            "roles.*.failed",
            "roles.*.gave_up"
        ]
    );
    let online = std::thread::available_parallelism().unwrap().get();
    assert_eq!(value["cpus"], online, "a native run has the online CPUs");
    // The schema-1 file the old build wrote has exactly the old set.
    let old =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schema1/run.json"));
    let old: serde_json::Value = serde_json::from_slice(&old.unwrap()).unwrap();
    assert_eq!(key_shapes(&old), before);
}

/// The acceptance case of issue 8: a memory budget of one page that the
/// world already exceeds, and nobody to reclaim (no kswapd, and a min
/// watermark of 0 so no direct reclaim), so every touch fails. Before the
/// fix each failure counted as a (very fast) operation and the run said ok.
#[test]
fn touches_that_all_fail_are_no_operations_and_starve_the_role() {
    let r = run_json(&[
        "--duration",
        "200ms",
        "--set",
        "world.tasks=100",
        "--set",
        "workload.scale=touch",
        "--threads",
        "1",
        "--set",
        "workload.reclaim.threads=0",
        "--set",
        "workload.fork_exit.threads=0",
        "--set",
        "memory.budget_pages=1",
        "--set",
        "memory.min_pages=0",
        "--set",
        "memory.low_pages=0",
        "--set",
        "memory.high_pages=0",
    ]);
    let touch = &r.roles["touch"];
    assert_eq!(touch.ops, 0, "a failed touch is no operation");
    assert!(touch.failed > 100, "every attempt failed: {}", touch.failed);
    assert_eq!(touch.ops_per_s, 0.0);
    assert_eq!(
        touch.latency_ns,
        Default::default(),
        "no latency sample from a failure"
    );
    assert_eq!(r.memory.useful_ops_per_s, 0.0);
    match &r.verdict {
        Verdict::Starved { role, reason } => {
            assert_eq!(role, "touch");
            assert!(reason.contains("failed"), "{reason}");
        }
        other => panic!("a role that got nothing done is not {other:?}"),
    }
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
            "--lock: unknown lock kind 'bkl' (valid: tas, spinlock,",
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
            &["--set", "workload.scale=nope"],
            "workload.scale: 'nope' is not a role (allowed: reclaim, fork_exit, touch, mprotect, execl, monitor, munmap)",
        ),
        (
            &["--set", "workload.forkexit.threads=1"],
            "workload.forkexit: unknown field `forkexit`, expected one of `scale`, `lock_target`, `mm`, `cond_resched`, `fault_lock`, `reclaim`, `fork_exit`,",
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
