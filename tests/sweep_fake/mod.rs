//! A fake engine for sweep tests: a RunReport that is a pure function of the
//! point, so two runs of one point agree and sweeps can be compared exactly.

#![allow(dead_code)] // each test file uses its own part

use rmap_storm::locks::LockKind;
use rmap_storm::results::{
    CtxSwitches, Fairness, Latency, LockClassReport, MemoryReport, RoleReport, RunReport,
    SweepEngine, SweepParams, SweepPoint, Verdict, XAxis,
};
use std::collections::BTreeMap;

/// A small sweep: 2 locks x threads 1,2,4 x 3 repeats = 18 points.
pub fn params() -> SweepParams {
    SweepParams {
        model: "models/aim7-fork-storm.toml".into(),
        locks: vec![LockKind::Spinlock, LockKind::Rwsem],
        x: XAxis::Threads(vec![1, 2, 4]),
        threads: None,
        repeat: 3,
        duration_ms: 500,
        seed: 7,
        overrides: vec!["world.tasks=100".into()],
        shard: None,
        engine: SweepEngine::default(),
    }
}

/// The fake engine: throughput grows with threads (less for the spinlock),
/// with a little per-seed noise.
pub fn report(point: &SweepPoint) -> rmap_storm::Result<RunReport> {
    let threads = point.threads.unwrap_or(2);
    let per_thread = match point.lock {
        LockKind::Spinlock => 900.0,
        _ => 1000.0,
    };
    let exponent = if point.lock == LockKind::Spinlock {
        0.5
    } else {
        0.9
    };
    let noise = (point.seed % 5) as f64 * 7.0;
    let ops_per_s = per_thread * f64::from(threads).powf(exponent) + noise;
    let duration_s = point.duration().as_secs_f64();
    let role = |threads: u32, ops_per_s: f64, p99: u64| RoleReport {
        threads,
        ops: (ops_per_s * duration_s) as u64,
        ops_per_s,
        latency_ns: Latency {
            p50: p99 / 4,
            p99,
            p999: p99 * 2,
            max: p99 * 3,
        },
        failed: u64::from(threads) % 2,
        gave_up: 0,
        direct_reclaim: 0,
        direct_reclaim_share: 0.0,
        vmas_per_op: 12.5,
        cpus_used: 0.5,
    };
    let p99 = 20_000 * u64::from(threads) + point.seed % 5;
    let roles = BTreeMap::from([
        ("reclaim".to_string(), role(threads, ops_per_s, p99)),
        ("fork-exit".to_string(), role(2, 500.0 + noise, 40_000)),
    ]);
    let class = |wait_share: f64, acquires: u64| LockClassReport {
        acquire_read: acquires,
        acquire_write: acquires / 10,
        contended_pct: wait_share * 50.0,
        wait_share,
        max_wait_ns: 10_000,
        mean_readers: 1.5,
        events: BTreeMap::from([("sleep".to_string(), acquires / 100)]),
    };
    let wait = 0.1 * f64::from(threads) / 4.0;
    Ok(RunReport {
        schema: rmap_storm::results::SCHEMA,
        model: point.model.clone(),
        engine: "fake".into(),
        lock: point.lock,
        threads,
        // Reports no CPUs, as files from before they were reported.
        cpus: 0,
        duration_s,
        seed: point.seed,
        overrides: point.overrides.clone(),
        roles,
        lock_stats: BTreeMap::from([
            ("anon_vma".to_string(), class(wait, 10_000)),
            ("i_mmap".to_string(), class(wait / 2.0, 1_000)),
        ]),
        ctx_switches: CtxSwitches {
            voluntary_per_s: 100.0 * f64::from(threads),
            involuntary_per_s: 10.0 * f64::from(threads) + noise,
        },
        fairness: BTreeMap::from([(
            "reclaim".to_string(),
            Fairness {
                jain: 0.9,
                max: 10,
                min: 8,
                starved_mark: false,
            },
        )]),
        memory: MemoryReport::default(),
        verdict: if threads >= 4 && point.lock == LockKind::Spinlock {
            Verdict::Starved {
                role: "fork-exit".into(),
                reason: "under 1% of its fair share, with a comma".into(),
            }
        } else {
            Verdict::Ok
        },
        sim: None,
    })
}
