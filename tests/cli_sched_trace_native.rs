//! `run --sched-trace FILE` natively. Where this process may make a tracefs
//! instance (root, tracefs mounted), the file holds the kernel's own
//! sched_switch, sched_waking and sched_wakeup lines of the pinned CPU only,
//! its workers' switches as many as the run's getrusage counted, on the
//! clock of `--lock-trace`, and the instance is gone afterwards. Elsewhere
//! the run is refused: one line, exit 2, nothing written.

mod common;

use common::text;
use std::path::Path;
use std::process::Command;

const INSTANCES: &str = "/sys/kernel/tracing/instances";

#[test]
fn a_native_sched_trace_is_the_kernels_own_or_a_clear_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, locks, json) = (
        dir.path().join("sched.txt"),
        dir.path().join("locks.txt"),
        dir.path().join("run.json"),
    );
    // The ticket lock on synchro's mmap_lock, every thread on CPU 0:
    // preempted holders make a yield storm, so the kernel switches a lot.
    let child = Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
        .args([
            "run",
            "models/synchro.toml",
            "--lock",
            "spinlock",
            "--pin",
            "0",
        ])
        .args(["--duration", "200ms", "--sched-trace"])
        .arg(&trace)
        .arg("--lock-trace")
        .arg(&locks)
        .arg("--json")
        .arg(&json)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .spawn()
        .expect("the binary runs");
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !(root && Path::new(INSTANCES).is_dir()) {
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--sched-trace: cannot make the tracefs instance"),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!trace.exists() && !json.exists(), "nothing written");
        return;
    }
    assert!(out.status.success(), "{err}");
    assert!(
        !Path::new(INSTANCES)
            .join(format!("rmap-storm-{pid}"))
            .exists(),
        "the instance is removed"
    );
    let sched = std::fs::read_to_string(&trace).unwrap();
    assert!(sched.starts_with("# rmap-storm native run of models/synchro.toml with spinlock"));
    let mut switches_out_of_workers = 0u64;
    let (mut first, mut last) = (f64::MAX, 0.0f64);
    for line in sched.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let cpu = fields.iter().find(|f| f.starts_with('[')).expect(line);
        assert_eq!(*cpu, "[000]", "only the pinned CPU: {line}");
        let at: f64 = fields
            .iter()
            .find_map(|f| f.strip_suffix(':')?.parse().ok())
            .expect(line);
        (first, last) = (first.min(at), last.max(at));
        let worker = ["monitor-", "mprotect-", "munmap-"]
            .iter()
            .any(|w| line.contains(&format!("prev_comm={w}")));
        if line.contains(": sched_switch: ") && worker {
            switches_out_of_workers += 1;
        }
    }
    // getrusage counts every switch out of a worker, voluntary or not.
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let per_s = run["ctx_switches"]["voluntary_per_s"].as_f64().unwrap()
        + run["ctx_switches"]["involuntary_per_s"].as_f64().unwrap();
    let counted = per_s * run["duration_s"].as_f64().unwrap();
    let ratio = switches_out_of_workers as f64 / counted;
    assert!(
        counted > 1_000.0 && (0.95..1.05).contains(&ratio),
        "{switches_out_of_workers} switches out of workers traced, {counted:.0} counted"
    );
    // One clock: the contended acquisitions fall inside the traced span.
    let contended = std::fs::read_to_string(&locks).unwrap();
    let stamp = contended
        .lines()
        .find(|l| l.contains("contention_begin"))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|f| f.strip_suffix(':')?.parse::<f64>().ok())
        })
        .expect("a contended acquisition");
    assert!(
        first <= stamp && stamp <= last,
        "{first} <= {stamp} <= {last}"
    );
}
