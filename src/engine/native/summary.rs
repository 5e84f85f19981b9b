//! A finished (or cut-off) run's slots and samples, turned into a RunReport
//! with the engine-agnostic figures of `metrics`.

use crate::engine::storm::ctx::Ctx;
use super::recorder::{LockKey, Record};
use crate::engine::storm::roles::Role;
use super::storm::Outcome;
use crate::engine::RunConfig;
use crate::locks::RawRwLock;
use crate::locks::stats::{ClassStats, LockClass, LockStats};
use crate::metrics::overlap::{self, Hold};
use crate::metrics::verdict;
use crate::metrics::{self, ThreadCtx};
use crate::report::run::{MemoryReport, RoleReport, RunReport, SCHEMA};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

pub fn report<L: RawRwLock>(cfg: &RunConfig, ctx: &Ctx<L>, mut out: Outcome) -> RunReport {
    let secs = out.elapsed.as_secs_f64().max(1e-9);
    // Per thread: role, ops, and its record (a snapshot: cut-off threads may
    // still be running).
    let threads: Vec<(Role, u64, Record)> = out
        .slots
        .iter()
        .map(|s| {
            let mut r = Record::default();
            std::mem::swap(&mut r, &mut s.record.lock());
            (Role::ALL[s.role], s.ops.load(Ordering::Relaxed), r)
        })
        .collect();
    let mut roles = BTreeMap::new();
    let mut fairness = BTreeMap::new();
    for role in Role::ALL {
        let mine: Vec<&(Role, u64, Record)> = threads.iter().filter(|t| t.0 == role).collect();
        if mine.is_empty() {
            continue;
        }
        let counts: Vec<u64> = mine.iter().map(|t| t.1).collect();
        let latency = metrics::merge(mine.iter().map(|t| &t.2.latency_ns));
        roles.insert(role.name().to_string(), role_report(&mine, &latency, secs));
        fairness.insert(role.name().to_string(), metrics::fairness(&counts));
        if let Some(p) = out.progress.roles.get_mut(role as usize) {
            p.name = role.name().to_string();
            p.threads = mine.len() as u32;
            p.mean_op_ns = if latency.is_empty() {
                0.0
            } else {
                latency.mean()
            };
            p.wait_share = role_wait_share(&mine);
        }
    }
    let mut lock = LockStats::default();
    let mut holds: Vec<(LockKey, Hold)> = Vec::new();
    let mut ctxsw = ThreadCtx::default();
    for (_, _, r) in &threads {
        lock.merge(&r.lock);
        holds.extend(r.holds.iter().copied());
        ctxsw = ctxsw + r.ctx;
    }
    let thread_time: u64 = threads.iter().map(|t| t.2.lifetime_ns).sum();
    let lock_stats = LockClass::ALL
        .iter()
        .map(|&c| {
            let readers = mean_readers(&holds, c);
            (
                c.key().to_string(),
                metrics::class_report(lock.class(c), thread_time, readers),
            )
        })
        .collect();
    let useful: u64 = threads.iter().filter(|t| t.0.useful()).map(|t| t.1).sum();
    let reclaimed = ctx.memory.reclaimed.load(Ordering::Relaxed);
    RunReport {
        schema: SCHEMA,
        model: cfg.model_path.display().to_string(),
        engine: "native".into(),
        lock: cfg.lock,
        threads: ctx.workload.role(&ctx.workload.scale).threads,
        duration_s: secs,
        seed: cfg.seed,
        overrides: cfg.overrides.clone(),
        roles,
        lock_stats,
        ctx_switches: ctxsw.per_s(secs),
        fairness,
        memory: MemoryReport {
            pages_reclaimed: reclaimed,
            pages_reclaimed_per_s: reclaimed as f64 / secs,
            direct_reclaim_entries: threads.iter().map(|t| t.2.direct_reclaims).sum(),
            useful_ops_per_s: useful as f64 / secs,
        },
        verdict: verdict::judge(&out.progress),
    }
}

fn role_report(mine: &[&(Role, u64, Record)], latency: &Histogram<u64>, secs: f64) -> RoleReport {
    let ops: u64 = mine.iter().map(|t| t.1).sum();
    let direct_ns: u64 = mine.iter().map(|t| t.2.direct_reclaim_ns).sum();
    let vmas: u64 = mine.iter().map(|t| t.2.vmas_visited).sum();
    RoleReport {
        threads: mine.len() as u32,
        ops,
        ops_per_s: ops as f64 / secs,
        latency_ns: metrics::latency(latency),
        direct_reclaim: mine.iter().map(|t| t.2.direct_reclaims).sum(),
        direct_reclaim_share: direct_ns as f64
            / (mine.iter().map(|t| t.2.lifetime_ns).sum::<u64>() as f64).max(1.0),
        vmas_per_op: if ops == 0 {
            0.0
        } else {
            vmas as f64 / ops as f64
        },
    }
}

/// Share of the role's thread time spent waiting for any lock.
fn role_wait_share(mine: &[&(Role, u64, Record)]) -> f64 {
    let mut all = ClassStats::default();
    for t in mine {
        for c in LockClass::ALL {
            all.merge(t.2.lock.class(c));
        }
    }
    metrics::wait_share(&all, mine.iter().map(|t| t.2.lifetime_ns).sum())
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
