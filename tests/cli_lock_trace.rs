//! `run --lock-trace FILE` on the real binary, both engines: the file holds
//! one contention_begin per contended request the run's JSON counts and a
//! contention_end for each grant, each end after its own thread's begin of
//! the same lock, in time order; every kind's slow paths are covered; the
//! simulated trace is the same for the same seed and leaves the run as it
//! was; a path that cannot be written is exit 2 before the run.

mod common;

use common::text;
use std::collections::HashMap;
use std::path::Path;

/// A trace's lines, read back.
struct Seen {
    begins: u64,
    ends: u64,
    /// Begins with no end yet at the file's end, over all threads.
    open: u64,
    /// Threads with a line in the file.
    tasks: u64,
    /// The JSON's contended requests, over every lock class.
    contended: u64,
}

impl Seen {
    /// One begin per contended request the JSON counts, and an end for
    /// each but those still open: at most one a thread, the wait it was in
    /// when the run stopped.
    fn agrees_with_its_json(&self, lock: &str) {
        assert_eq!(
            self.begins, self.contended,
            "{lock}: one begin per contended request"
        );
        assert_eq!(self.ends + self.open, self.begins, "{lock}");
        assert!(
            self.open <= self.tasks,
            "{lock}: {} waits still open at the stop, more than the {} threads",
            self.open,
            self.tasks
        );
    }
}

/// Run `model` with `lock` on `engine_args`, tracing; check the trace's
/// order and pairing line by line; return its counts beside the JSON's.
fn traced(model: &str, lock: &str, engine_args: &[&str], dir: &Path) -> (Seen, String) {
    let (trace, json) = (
        dir.join(format!("{lock}.trace")),
        dir.join(format!("{lock}.json")),
    );
    let mut args = vec![model, "--lock", lock, "--seed", "2"];
    args.extend_from_slice(engine_args);
    args.extend([
        "--lock-trace",
        trace.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = common::rmap_storm("run", &args);
    assert!(out.status.success(), "{lock}: {}", text(&out.stderr));
    let file = std::fs::read_to_string(&trace).unwrap();
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let contended = run["lock_stats"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| {
            c["events"]["contended_read"].as_u64().unwrap()
                + c["events"]["contended_write"].as_u64().unwrap()
        })
        .sum();
    let mut waiting: HashMap<(String, String), u64> = HashMap::new();
    let (mut begins, mut ends, mut last) = (0, 0, 0.0f64);
    for line in file.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // TASK-PID [CPU] flags TIMESTAMP: event: class (...)
        let (task, stamp, event, class) = (fields[0], fields[3], fields[4], fields[5]);
        let at: f64 = stamp.trim_end_matches(':').parse().unwrap();
        assert!(at >= last, "{lock}: time goes back at {line}");
        last = at;
        let open = waiting
            .entry((task.to_string(), class.to_string()))
            .or_default();
        match event {
            "contention_begin:" => {
                assert!(
                    line.ends_with("(flags=READ)") || line.ends_with("(flags=WRITE)"),
                    "{line}"
                );
                begins += 1;
                *open += 1;
            }
            "contention_end:" => {
                assert!(line.ends_with("(ret=0)"), "{line}");
                assert!(*open > 0, "{lock}: an end with no begin of its own: {line}");
                ends += 1;
                *open -= 1;
            }
            other => panic!("{lock}: unknown event {other} in {line}"),
        }
    }
    let open = waiting.values().sum();
    let tasks = waiting
        .keys()
        .map(|(task, _)| task)
        .collect::<std::collections::BTreeSet<_>>()
        .len() as u64;
    (
        Seen {
            begins,
            ends,
            open,
            tasks,
            contended,
        },
        file,
    )
}

/// Every kind, simulated, contended on synchro's mmap_lock at 2 CPUs: one
/// begin per contended request counted, an end for each but those still
/// waiting when the run stopped (at most one a thread).
#[test]
fn every_kinds_slow_paths_are_traced_in_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let sim = [
        "--threads",
        "2",
        "--pin",
        "0-1",
        "--engine",
        "sim",
        "--cpus",
        "2",
        "--preempt",
        "user",
        "--duration",
        "50ms",
    ];
    for lock in [
        "tas",
        "spinlock",
        "qspinlock",
        "rwlock",
        "qrwlock",
        "rwsem-fifo",
        "rwsem-xadd",
        "rwsem",
        "mutex",
        "percpu-rwsem",
    ] {
        let (seen, _) = traced("models/synchro.toml", lock, &sim, dir.path());
        assert!(seen.begins > 0, "{lock}: synchro contends its mmap_lock");
        seen.agrees_with_its_json(lock);
        assert!(seen.tasks <= 5, "{lock}: synchro runs 5 threads here");
    }
}

/// The same natively, for a sleeping kind on the mmap_lock and a spinning
/// kind on the anon_vma root: the counts agree with the JSON's exactly.
#[test]
fn native_slow_paths_are_traced_with_the_monotonic_clock() {
    let dir = tempfile::tempdir().unwrap();
    let native = ["--threads", "2", "--pin", "0-1", "--duration", "300ms"];
    for (model, lock) in [
        ("models/synchro.toml", "mutex"),
        ("models/aim7-fork-storm.toml", "tas"),
    ] {
        let (seen, file) = traced(model, lock, &native, dir.path());
        assert!(seen.begins > 0, "{lock}: two threads on two CPUs contend");
        seen.agrees_with_its_json(lock);
        assert!(
            file.lines()
                .nth(1)
                .unwrap()
                .contains("times in CLOCK_MONOTONIC seconds"),
            "{file}"
        );
    }
}

/// A simulated trace is the same for the same seed, and tracing does not
/// change the simulated run.
#[test]
fn the_simulated_trace_is_deterministic_and_costs_the_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = |trace: Option<&str>, json: &str| {
        let json = dir.path().join(json);
        let mut args = vec![
            "models/synchro.toml",
            "--lock",
            "rwsem-xadd",
            "--threads",
            "2",
            "--engine",
            "sim",
            "--cpus",
            "2",
            "--duration",
            "30ms",
            "--json",
            json.to_str().unwrap(),
        ];
        let trace = trace.map(|t| dir.path().join(t));
        if let Some(t) = &trace {
            args.extend(["--lock-trace", t.to_str().unwrap()]);
        }
        let out = common::rmap_storm("run", &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        common::strip_wall_clock(&mut report);
        (report, trace.map(|t| std::fs::read(t).unwrap()))
    };
    let (first, a) = run(Some("a.trace"), "a.json");
    let (second, b) = run(Some("b.trace"), "b.json");
    let (untraced, _) = run(None, "c.json");
    assert_eq!(a, b, "same seed, same trace");
    assert!(a.unwrap().len() > 1_000, "the run contended");
    assert_eq!(first, second);
    assert_eq!(
        first, untraced,
        "the trace read the virtual clock without charging it"
    );
}

#[test]
fn a_trace_path_in_a_missing_folder_is_exit_2_before_the_run() {
    let out = common::rmap_storm(
        "run",
        &[
            "models/synchro.toml",
            "--duration",
            "10ms",
            "--lock-trace",
            "/no/such/folder/t.trace",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/no/such/folder/t.trace"), "{err}");
    assert!(out.stdout.is_empty(), "nothing ran");
}
