//! `sched.jitter_ns`: switch and wake-up latencies drawn about their means.
//! With a spread, seeds sample different phases of the threads (their
//! monitor counts differ) while one seed still replays byte for byte;
//! without one, every latency is its mean and the seed changes nothing in
//! synchro's timing (docs/sim.md, "Jitter").

mod common;

use common::text;
use std::path::Path;

/// The default profile with `jitter_ns` set, written to `dir`.
fn profile(dir: &Path, jitter_ns: f64) -> String {
    let default = std::fs::read_to_string("models/machines/default.toml").unwrap();
    let mut found = false;
    let lines: Vec<String> = default
        .lines()
        .map(|l| {
            if l.starts_with("jitter_ns = ") {
                found = true;
                format!("jitter_ns = {jitter_ns:?}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(found, "the default profile has a jitter_ns line");
    let path = dir.join(format!("jitter-{jitter_ns}.toml"));
    std::fs::write(&path, lines.join("\n")).unwrap();
    path.to_str().unwrap().to_string()
}

/// synchro on one user-mode CPU for 50 virtual ms: the JSON, wall-clock
/// fields removed, and the monitor's operations.
fn synchro(machine: &str, seed: u64) -> (serde_json::Value, u64) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let seed = seed.to_string();
    let out = common::rmap_storm(
        "run",
        &[
            "models/synchro.toml",
            "--threads",
            "1",
            "--lock",
            "rwlock",
            "--engine",
            "sim",
            "--cpus",
            "1",
            "--preempt",
            "user",
            "--machine",
            machine,
            "--duration",
            "50ms",
            "--seed",
            &seed,
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    common::strip_wall_clock(&mut v);
    let ops = v["roles"]["monitor"]["ops"].as_u64().expect("monitor ops");
    (v, ops)
}

#[test]
fn a_spread_makes_seeds_differ_in_timing_and_still_replays() {
    let dir = tempfile::tempdir().unwrap();
    let (none, some) = (profile(dir.path(), 0.0), profile(dir.path(), 300.0));
    let seeds = 1..=4;
    let constant: Vec<u64> = seeds.clone().map(|s| synchro(&none, s).1).collect();
    let jittered: Vec<u64> = seeds.map(|s| synchro(&some, s).1).collect();
    assert!(
        constant.windows(2).all(|w| w[0] == w[1]),
        "without jitter the seeds should not change synchro's timing: {constant:?}"
    );
    assert!(
        jittered.windows(2).any(|w| w[0] != w[1]),
        "with jitter_ns = 300 every seed gave the same monitor count {jittered:?}: the spread is not drawn"
    );
    let (a, _) = synchro(&some, 2);
    let (b, _) = synchro(&some, 2);
    assert_eq!(a, b, "one seed with jitter must replay byte for byte");
}
