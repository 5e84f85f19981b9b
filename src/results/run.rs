//! The result of one run: what `rmap-storm run --json` writes, what sweeps
//! collect, what plots and comparisons read. Engine-agnostic: nothing here says
//! how the figures were made, only `engine` names who made them.
//!
//! Every map is a BTreeMap so JSON and tables list keys in one stable order.

use crate::locks::LockKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// [`super::SCHEMA`] when written by this build; an older file keeps
    /// its own (see [`super::check_schema`]).
    pub schema: u32,
    /// The model file's path as given (or the default model's).
    pub model: String,
    /// "native" (real threads) or "sim" (discrete-event simulation).
    pub engine: String,
    /// The kind on the anon_vma roots and address_spaces.
    pub lock: LockKind,
    /// Threads of the scaled role (the x axis of a scaling curve).
    pub threads: u32,
    /// CPUs the run had: this machine's online CPUs natively, the virtual
    /// ones simulated. Past them more threads time-slice instead of
    /// scaling. 0 in files written before it was reported.
    #[serde(default)]
    pub cpus: u32,
    /// Length of the run, seconds: measured wall time natively, the virtual
    /// duration simulated.
    pub duration_s: f64,
    pub seed: u64,
    /// `--set` overrides applied, in the order given.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// Per role (reclaim, fork-exit, touch, ...): what it got done.
    pub roles: BTreeMap<String, RoleReport>,
    /// Per lock class (anon_vma, i_mmap, mmap_lock).
    pub lock_stats: BTreeMap<String, LockClassReport>,
    pub ctx_switches: CtxSwitches,
    /// Per role: how evenly its threads progressed.
    pub fairness: BTreeMap<String, Fairness>,
    /// Memory pressure figures (zero when the model has no `[memory]` budget).
    #[serde(default)]
    pub memory: MemoryReport,
    pub verdict: Verdict,
    /// The simulated machine and what simulating it took; absent for a
    /// native run (its `duration_s` is then wall time, for a simulated one
    /// virtual time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimReport>,
}

/// A simulated run's own figures. `wall_s`, `events_per_s` and
/// `peak_rss_mib` are this host's and vary run to run; everything else is
/// fixed by the inputs and the seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    /// Virtual CPUs.
    pub cpus: u32,
    /// The preemption model (none, voluntary, full).
    pub preempt: String,
    /// The machine profile's name.
    pub machine: String,
    /// Simulated events (thread resumptions) run.
    pub events: u64,
    /// Cache lines the run touched.
    pub lines: u64,
    /// Threads whose bodies had not returned when the run ended.
    pub unfinished_threads: u32,
    /// Wall-clock seconds the simulation took on this host.
    pub wall_s: f64,
    /// Simulated events per wall-clock second.
    pub events_per_s: f64,
    /// The process's peak resident memory so far (VmHWM), MiB.
    pub peak_rss_mib: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleReport {
    /// Threads that ran this role.
    pub threads: u32,
    /// Done operations: the only ones counted in `ops_per_s` and latency.
    pub ops: u64,
    pub ops_per_s: f64,
    /// Latency of one done operation, nanoseconds.
    pub latency_ns: Latency,
    /// Operations that could not be done (no free page, no live task, no
    /// room to fork, nothing to split). Schema 2; 0 when read from schema 1.
    #[serde(default)]
    pub failed: u64,
    /// Operations that gave up on a contended try_lock. Schema 2.
    #[serde(default)]
    pub gave_up: u64,
    /// Direct-reclaim entries made by this role's threads.
    #[serde(default)]
    pub direct_reclaim: u64,
    /// Share of this role's thread time spent in direct reclaim, 0..1.
    #[serde(default)]
    pub direct_reclaim_share: f64,
    /// rmap_walk vmas visited per operation (0 for roles that do not walk).
    #[serde(default)]
    pub vmas_per_op: f64,
    /// The CPUs' worth the role's threads ran: their CPU time over the run's
    /// span, from its start to its last thread's end (getrusage's utime +
    /// stime natively, virtual CPU time simulated; 0 when read from a
    /// report made before it was counted).
    #[serde(default)]
    pub cpus_used: f64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LockClassReport {
    pub acquire_read: u64,
    pub acquire_write: u64,
    /// Contended acquisitions / all acquisitions, percent.
    pub contended_pct: f64,
    /// Time threads spent waiting for this class / total thread time, 0..1.
    pub wait_share: f64,
    /// Longest single wait, nanoseconds.
    pub max_wait_ns: u64,
    /// Time-averaged readers inside while the lock is read-held.
    pub mean_readers: f64,
    /// Every counter of `locks::stats::Event`, by its key.
    pub events: BTreeMap<String, u64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CtxSwitches {
    pub voluntary_per_s: f64,
    pub involuntary_per_s: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Jain's index over the role's threads' op counts: 1 = even, 1/n = one did all.
    pub jain: f64,
    pub max: u64,
    pub min: u64,
    /// locktorture's `???`: max/2 > min.
    pub starved_mark: bool,
}

/// The memory line. Every key after `useful_ops_per_s` was added with swap,
/// the LRU and per-VMA locks; files written before them read as zero.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    pub pages_reclaimed: u64,
    pub pages_reclaimed_per_s: f64,
    pub direct_reclaim_entries: u64,
    /// touch + fork-exit operations: the AIM7 jobs, apart from reclaim work.
    pub useful_ops_per_s: f64,
    /// Pages reclaimed in each second of the run, in order (the last one
    /// partial): whether reclaim keeps going or dies out.
    #[serde(default)]
    pub reclaimed_by_second: Vec<u64>,
    /// Inactive pages isolated and walked while reclaiming (pgscan).
    #[serde(default)]
    pub pages_scanned: u64,
    /// `pages_scanned` per page reclaimed: the LRU churn Andrew Morton
    /// asked about on the 2022 try_lock patch (0 when nothing was reclaimed).
    #[serde(default)]
    pub scanned_per_reclaimed: f64,
    /// Faults on swap entries that read their page in, per second.
    #[serde(default)]
    pub swapins_per_s: f64,
    /// Faults on swap entries whose page was in the swap cache, per second.
    #[serde(default)]
    pub swap_cache_hits_per_s: f64,
    /// Direct-reclaim entries that waited in reclaim_throttle.
    #[serde(default)]
    pub throttled: u64,
    /// Share of all thread time spent waiting for the lru_lock, 0..1.
    #[serde(default)]
    pub lru_lock_wait_share: f64,
    /// vma_lock_* events of faults under per-VMA locks (all 0 with
    /// `fault_lock = "mmap_lock"`).
    #[serde(default)]
    pub vma_lock: VmaLockReport,
}

/// /proc/vmstat's vma_lock_* counters (CONFIG_PER_VMA_LOCK_STATS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmaLockReport {
    /// Faults completed under the vma's lock.
    pub success: u64,
    /// Could not lock the vma (none, not anonymous, no anon_vma yet, write
    /// locked): fell back to mmap_lock.
    pub abort: u64,
    /// Had to retry under mmap_lock (a swap entry, in 6.4).
    pub retry: u64,
    /// The vma went between lookup and lock: looked again.
    pub miss: u64,
}

/// `progress: ok | starved ROLE | livelock`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "progress", rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Starved { role: String, reason: String },
    Livelock { reason: String },
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Ok => write!(f, "progress: ok"),
            Verdict::Starved { role, reason } => write!(f, "progress: starved {role} ({reason})"),
            Verdict::Livelock { reason } => write!(f, "progress: livelock ({reason})"),
        }
    }
}
