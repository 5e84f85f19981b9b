//! A finished (or cut-off) run's per-thread records and progress samples,
//! turned into a [`RunReport`]: the same figures whichever engine ran it.

use super::ThreadCtx;
use super::fairness::fairness;
use super::latency::{latency, merge};
use super::lock::{class_report, wait_share};
use super::overlap::{self, Hold};
use super::record::{LockKey, Record, add_series};
use super::verdict::{RunProgress, judge};
use crate::locks::LockKind;
use crate::locks::stats::{ClassStats, LockClass, LockStats};
use crate::model::Role;
use crate::results::run::VmaLockReport;
use crate::results::{MemoryReport, RoleReport, RunReport, SCHEMA};
use crate::rmap::vma_lock::VmaLockStats;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// What a report says about the run itself, beside its figures.
#[derive(Clone, Debug)]
pub struct RunMeta {
    /// The model file's path as given.
    pub model: String,
    /// Who ran it: "native" (real threads) or "sim".
    pub engine: String,
    pub lock: LockKind,
    /// Threads of the scaled role.
    pub threads: u32,
    /// CPUs the run had (online natively, virtual simulated).
    pub cpus: u32,
    pub seed: u64,
    /// `--set` overrides, in the order given.
    pub overrides: Vec<String>,
}

/// One worker thread's part of a run.
pub struct ThreadRecord {
    pub role: Role,
    /// Done operations (the engine's live counter, the same one its monitor
    /// sampled).
    pub ops: u64,
    pub record: Record,
}

/// The report of a run that lasted `secs` seconds. `progress` holds the
/// monitor's samples, indexed by `Role as usize`; the rest of what the
/// verdict reads is filled in here from the records.
pub fn report(
    meta: RunMeta,
    threads: &[ThreadRecord],
    mut progress: RunProgress,
    secs: f64,
) -> RunReport {
    let secs = secs.max(1e-9);
    let span_ns = threads
        .iter()
        .map(|t| t.record.lifetime_ns)
        .max()
        .unwrap_or(0);
    let mut roles = BTreeMap::new();
    let mut fairness_by_role = BTreeMap::new();
    for role in Role::ALL {
        let mine: Vec<&ThreadRecord> = threads.iter().filter(|t| t.role == role).collect();
        if mine.is_empty() {
            continue;
        }
        let counts: Vec<u64> = mine.iter().map(|t| t.ops).collect();
        let hist = merge(mine.iter().map(|t| &t.record.latency_ns));
        let figures = role_report(&mine, &hist, secs, span_ns);
        if let Some(p) = progress.roles.get_mut(role as usize) {
            p.name = role.name().to_string();
            p.threads = mine.len() as u32;
            p.mean_op_ns = if hist.is_empty() { 0.0 } else { hist.mean() };
            p.wait_share = role_wait_share(&mine);
            p.failed = figures.failed;
            p.gave_up = figures.gave_up;
        }
        roles.insert(role.name().to_string(), figures);
        fairness_by_role.insert(role.name().to_string(), fairness(&counts));
    }
    let mut lock = LockStats::default();
    let mut holds: Vec<(LockKey, Hold)> = Vec::new();
    let mut ctxsw = ThreadCtx::default();
    for t in threads {
        lock.merge(&t.record.lock);
        holds.extend(t.record.holds.iter().copied());
        ctxsw = ctxsw + t.record.ctx;
    }
    let thread_time: u64 = threads.iter().map(|t| t.record.lifetime_ns).sum();
    let lock_stats = LockClass::ALL
        .iter()
        .map(|&c| {
            let readers = mean_readers(&holds, c);
            let figures = class_report(lock.class(c), thread_time, readers);
            (c.key().to_string(), figures)
        })
        .collect();
    let memory = memory_report(threads, thread_time, secs);
    RunReport {
        schema: SCHEMA,
        model: meta.model,
        engine: meta.engine,
        lock: meta.lock,
        threads: meta.threads,
        cpus: meta.cpus,
        duration_s: secs,
        seed: meta.seed,
        overrides: meta.overrides,
        roles,
        lock_stats,
        ctx_switches: ctxsw.per_s(secs),
        fairness: fairness_by_role,
        memory,
        verdict: judge(&progress),
        sim: None,
    }
}

/// The memory line's figures, summed over every thread (`thread_time`: all
/// their lifetimes, ns).
fn memory_report(threads: &[ThreadRecord], thread_time: u64, secs: f64) -> MemoryReport {
    let sum = |f: fn(&Record) -> u64| threads.iter().map(|t| f(&t.record)).sum::<u64>();
    let useful: u64 = threads
        .iter()
        .filter(|t| t.role.useful())
        .map(|t| t.ops)
        .sum();
    let reclaimed = sum(|r| r.pages_reclaimed);
    let scanned = sum(|r| r.pages_scanned);
    let mut by_second = Vec::new();
    let mut vma_lock = VmaLockStats::default();
    for t in threads {
        add_series(&mut by_second, &t.record.reclaimed_by_s);
        vma_lock.add(&t.record.vma_lock);
    }
    MemoryReport {
        pages_reclaimed: reclaimed,
        pages_reclaimed_per_s: reclaimed as f64 / secs,
        direct_reclaim_entries: sum(|r| r.direct_reclaims),
        useful_ops_per_s: useful as f64 / secs,
        reclaimed_by_second: by_second,
        pages_scanned: scanned,
        scanned_per_reclaimed: if reclaimed == 0 {
            0.0
        } else {
            scanned as f64 / reclaimed as f64
        },
        swapins_per_s: sum(|r| r.swapins) as f64 / secs,
        swap_cache_hits_per_s: sum(|r| r.swap_cache_hits) as f64 / secs,
        throttled: sum(|r| r.throttled),
        lru_lock_wait_share: sum(|r| r.lru_wait_ns) as f64 / (thread_time as f64).max(1.0),
        vma_lock: VmaLockReport {
            success: vma_lock.success,
            abort: vma_lock.abort,
            retry: vma_lock.retry,
            miss: vma_lock.miss,
        },
    }
}

/// One role's figures: done operations only in ops, ops/s, latency and
/// vmas/op; failed and given-up ones beside them.
/// One role's figures; `span_ns` is the run's span as its threads lived it
/// (from the start to the last one's end).
fn role_report(
    mine: &[&ThreadRecord],
    latency_ns: &Histogram<u64>,
    secs: f64,
    span_ns: u64,
) -> RoleReport {
    let sum = |f: fn(&Record) -> u64| mine.iter().map(|t| f(&t.record)).sum::<u64>();
    let ops: u64 = mine.iter().map(|t| t.ops).sum();
    let vmas = sum(|r| r.vmas_visited);
    RoleReport {
        threads: mine.len() as u32,
        ops,
        ops_per_s: ops as f64 / secs,
        latency_ns: latency(latency_ns),
        failed: sum(|r| r.failed),
        gave_up: sum(|r| r.gave_up),
        direct_reclaim: sum(|r| r.direct_reclaims),
        direct_reclaim_share: sum(|r| r.direct_reclaim_ns) as f64
            / (sum(|r| r.lifetime_ns) as f64).max(1.0),
        vmas_per_op: if ops == 0 {
            0.0
        } else {
            vmas as f64 / ops as f64
        },
        cpus_used: sum(|r| r.ctx.cpu_ns) as f64 / (span_ns as f64).max(1.0),
    }
}

/// Share of the role's thread time spent waiting for any lock.
fn role_wait_share(mine: &[&ThreadRecord]) -> f64 {
    let mut all = ClassStats::default();
    for t in mine {
        for c in LockClass::ALL {
            all.merge(t.record.lock.class(c));
        }
    }
    wait_share(&all, mine.iter().map(|t| t.record.lifetime_ns).sum())
}

/// Time-averaged readers inside one lock while it is read-held, over every
/// lock of class `class` (each lock's holds are integrated on their own).
fn mean_readers(holds: &[(LockKey, Hold)], class: LockClass) -> f64 {
    let mut by_lock: BTreeMap<LockKey, Vec<Hold>> = BTreeMap::new();
    for &(k, h) in holds {
        let wanted = match k {
            LockKey::Family(_) => class == LockClass::AnonVma,
            LockKey::Space(_) => class == LockClass::IMmap,
        };
        if wanted {
            by_lock.entry(k).or_default().push(h);
        }
    }
    let (mut reader_ns, mut held_ns) = (0u64, 0u64);
    for (_, hs) in by_lock {
        let c = overlap::integrate(hs);
        reader_ns += c.reader_ns;
        held_ns += c.held_ns;
    }
    overlap::Concurrency { reader_ns, held_ns }.mean_readers()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::record::OpOutcome;
    use crate::metrics::verdict::RoleProgress;
    use crate::results::Verdict;

    fn meta() -> RunMeta {
        RunMeta {
            model: "m.toml".into(),
            engine: "test".into(),
            lock: LockKind::Rwsem,
            threads: 1,
            cpus: 2,
            seed: 1,
            overrides: vec![],
        }
    }

    /// A thread of `role` whose op ran `outcomes`, 1 us each, recorded the
    /// way every engine records them; its monitor saw `done` ops.
    fn thread(role: Role, outcomes: &[OpOutcome]) -> ThreadRecord {
        let mut record = Record::default();
        let ops = outcomes.iter().filter(|&&o| record.note(o, 1_000)).count() as u64;
        record.lifetime_ns = 1_000_000;
        ThreadRecord { role, ops, record }
    }

    /// Two monitor windows in which `role` did `ops` (split evenly).
    fn progress(roles: &[(Role, u64)]) -> RunProgress {
        let mut p = RunProgress {
            window_ns: 100_000_000,
            cpu_busy: vec![1.0, 1.0],
            ..RunProgress::default()
        };
        p.roles.resize_with(Role::ALL.len(), RoleProgress::default);
        for &(role, ops) in roles {
            p.roles[role as usize].ops_per_window = vec![ops / 2, ops - ops / 2];
        }
        p
    }

    #[test]
    fn a_role_whose_operations_all_fail_reports_none_done_and_is_starved() {
        let failing = thread(Role::Touch, &[OpOutcome::Failed; 40]);
        let working = thread(Role::Reclaim, &[OpOutcome::Done; 10]);
        let p = progress(&[(Role::Touch, 0), (Role::Reclaim, 10)]);
        let r = report(meta(), &[failing, working], p, 1.0);
        let touch = &r.roles["touch"];
        assert_eq!((touch.ops, touch.failed, touch.gave_up), (0, 40, 0));
        assert_eq!(touch.ops_per_s, 0.0);
        assert_eq!(
            touch.latency_ns,
            Default::default(),
            "no sample from a failure"
        );
        assert_eq!(r.memory.useful_ops_per_s, 0.0, "touch is useful work");
        assert_eq!(r.roles["reclaim"].ops, 10);
        match &r.verdict {
            Verdict::Starved { role, reason } => {
                assert_eq!(role, "touch");
                assert!(reason.contains("40 failed"), "{reason}");
            }
            other => panic!("a role that never got anything done is not {other:?}"),
        }
    }

    #[test]
    fn failures_and_give_ups_stay_out_of_ops_and_latency() {
        let mixed = [
            OpOutcome::Done,
            OpOutcome::GaveUp,
            OpOutcome::Failed,
            OpOutcome::GaveUp,
        ];
        let mut t = thread(Role::Reclaim, &mixed);
        t.record.vmas_visited = 30;
        t.record.pages_reclaimed = 4;
        let r = report(meta(), &[t], progress(&[(Role::Reclaim, 1)]), 2.0);
        let reclaim = &r.roles["reclaim"];
        assert_eq!((reclaim.ops, reclaim.failed, reclaim.gave_up), (1, 1, 2));
        assert_eq!((reclaim.ops_per_s, reclaim.vmas_per_op), (0.5, 30.0));
        assert!(reclaim.latency_ns.max.abs_diff(1_000) <= 10);
        assert_eq!(
            (r.memory.pages_reclaimed, r.memory.pages_reclaimed_per_s),
            (4, 2.0)
        );
        assert_eq!(r.verdict, Verdict::Ok);
    }

    /// Fixed inputs, figures computed by hand: two reclaimers and a toucher
    /// over 2 s.
    #[test]
    fn the_memory_line_sums_threads_and_divides_by_what_it_says() {
        let mut a = thread(Role::Reclaim, &[OpOutcome::Done; 4]);
        for s in [0, 0, 1] {
            a.record.reclaimed(s);
        }
        a.record.pages_scanned = 9;
        a.record.lru_wait_ns = 20_000;
        let mut b = thread(Role::Reclaim, &[OpOutcome::Done; 2]);
        b.record.reclaimed(1);
        b.record.pages_scanned = 3;
        let mut t = thread(Role::Touch, &[OpOutcome::Done; 6]);
        t.record.swapins = 10;
        t.record.swap_cache_hits = 4;
        t.record.throttled = 1;
        t.record.vma_lock.success = 5;
        t.record.vma_lock.abort = 2;
        let p = progress(&[(Role::Reclaim, 6), (Role::Touch, 6)]);
        let m = report(meta(), &[a, b, t], p, 2.0).memory;
        assert_eq!(m.pages_reclaimed, 4);
        assert_eq!(m.reclaimed_by_second, [2, 2]);
        assert_eq!((m.pages_scanned, m.scanned_per_reclaimed), (12, 3.0));
        assert_eq!((m.swapins_per_s, m.swap_cache_hits_per_s), (5.0, 2.0));
        assert_eq!(m.throttled, 1);
        // 20 us waited over three threads of 1 ms each.
        assert!((m.lru_lock_wait_share - 20_000.0 / 3_000_000.0).abs() < 1e-12);
        assert_eq!(
            (m.vma_lock.success, m.vma_lock.abort, m.vma_lock.miss),
            (5, 2, 0)
        );
    }

    /// The run's span is its longest-lived thread's 2.5 s (a toucher whose
    /// last operation ended after the others): two reclaimers that ran 1.5
    /// s and 1 s of CPU used one CPU between them, the toucher's 0.25 s a
    /// tenth of one.
    #[test]
    fn a_role_uses_its_cpu_time_over_the_runs_span() {
        let mut a = thread(Role::Reclaim, &[OpOutcome::Done; 3]);
        a.record.ctx.cpu_ns = 1_500_000_000;
        a.record.lifetime_ns = 2_000_000_000;
        let mut b = thread(Role::Reclaim, &[OpOutcome::Done; 1]);
        b.record.ctx.cpu_ns = 1_000_000_000;
        b.record.lifetime_ns = 2_000_000_000;
        let mut t = thread(Role::Touch, &[OpOutcome::Done; 2]);
        t.record.ctx.cpu_ns = 250_000_000;
        t.record.lifetime_ns = 2_500_000_000;
        let p = progress(&[(Role::Reclaim, 4), (Role::Touch, 2)]);
        let r = report(meta(), &[a, b, t], p, 2.0);
        assert_eq!(r.roles["reclaim"].cpus_used, 1.0);
        assert_eq!(r.roles["touch"].cpus_used, 0.1);
    }
}
