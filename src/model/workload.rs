//! The `[workload]` and `[memory]` sections: who runs, how many, doing what,
//! and how much memory they share.
//!
//! ```toml
//! [workload]
//! scale = "reclaim"        # the role `--threads N` sets: the x axis of a curve
//! lock_target = "rmap"     # what `--lock` sets: "rmap" (every anon_vma root and
//!                          # i_mmap lock) or "mmap_lock"; the other gets `--mmap-lock`
//!                          # (default rwsem)
//! mm = "any"               # which tasks touch/mprotect/monitor/munmap work on:
//!                          # "any" live task, or only the "ancestor"
//! cond_resched = false     # walkers yield at every vma visited, as rmap_walk does
//! fault_lock = "mmap_lock" # what a page fault locks: "mmap_lock" (READ), or
//!                          # "per_vma" (the vma's lock, 6.4+, falling back
//!                          # to mmap_lock READ)
//!
//! [workload.reclaim]       # kswapd: page_referenced, then try_to_unmap
//! threads = 2
//! think_us = 0             # pause between operations, outside every lock, us
//! work_ns = 0              # extra work per operation inside its lock (walks: per vma), ns
//! try_lock = false         # give up on a contended root and keep the page (2022+)
//! ```
//!
//! Roles ([`Role`]): `reclaim`, `fork_exit`, `touch`, `mprotect`, `execl`,
//! `monitor`, `munmap`. Each takes `threads` and `think_us`; `work_ns` is work done
//! while holding the role's lock (reclaim: per vma visited; monitor: while
//! mmap_lock is read-held). A key that only one role understands (`try_lock`,
//! `read_critical`, `disk_us`, `write_pct`, `remap`, `downgrade`, `any_parent`,
//! `work_ns`) is
//! refused
//! on the others.
//!
//! ```toml
//! [memory]                 # a zone's free-page watermarks (mm/page_alloc.c)
//! budget_pages = 200000    # pages the machine has; 0 = no limit, no pressure
//! min_pages = 2000         # below: an allocating thread reclaims itself first
//! low_pages = 4000         # below: kswapd (the reclaim role) wakes ...
//! high_pages = 8000        # ... and works until free pages reach this
//! reclaim_batch = 32       # pages one direct-reclaim entry scans (SWAP_CLUSTER_MAX)
//! ```

use super::role::{PerRole, Role};
use super::world::KeyError;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::fmt;

/// More threads than this in one role is a typo, not an experiment: torture's
/// limit, and 2048x this machine's cores.
pub const MAX_THREADS: u32 = 4096;
/// Longest think time or critical-section work: one second.
const MAX_US: u64 = 1_000_000;
const MAX_NS: u64 = 1_000_000_000;
/// Largest page budget: 2^40 pages (4 PiB of 4 KiB pages), beyond any machine.
const MAX_BUDGET: u64 = 1 << 40;

/// The `[workload]` section. Its keys are the four below and one
/// `[workload.ROLE]` table per [`Role`], read by the `Deserialize` impl below
/// so that role names are spelled only by [`Role::name`].
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    /// The role `--threads` sets: the x axis of a scaling curve.
    pub scale: Role,
    /// What `--lock` sets (TOML key `lock_target`).
    pub lock_target: StudiedLock,
    pub mm: MmChoice,
    pub cond_resched: bool,
    /// What a page fault locks (TOML key `fault_lock`).
    pub fault_lock: FaultLock,
    /// Each role's settings (`[workload.ROLE]`; all zero when absent).
    pub roles: PerRole<RoleSpec>,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            scale: Role::Reclaim,
            lock_target: StudiedLock::default(),
            mm: MmChoice::default(),
            cond_resched: false,
            fault_lock: FaultLock::default(),
            roles: PerRole::default(),
        }
    }
}

/// The `[workload]` keys that are not role tables.
const PLAIN_KEYS: [&str; 5] = ["scale", "lock_target", "mm", "cond_resched", "fault_lock"];

/// One key of `[workload]`, read before its value so an unknown key is an
/// error about that key (and the model loader names it in its message).
enum WorkloadKey {
    Plain(usize),
    Role(Role),
}

impl<'de> Deserialize<'de> for WorkloadKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = String::deserialize(d)?;
        if let Some(i) = PLAIN_KEYS.iter().position(|k| *k == key) {
            return Ok(WorkloadKey::Plain(i));
        }
        key.parse().map(WorkloadKey::Role).map_err(|_| {
            let expected: Vec<String> = PLAIN_KEYS
                .iter()
                .copied()
                .chain(Role::ALL.map(Role::name))
                .map(|k| format!("`{k}`"))
                .collect();
            de::Error::custom(format!(
                "unknown field `{key}`, expected one of {}",
                expected.join(", ")
            ))
        })
    }
}

impl<'de> Deserialize<'de> for WorkloadSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(WorkloadVisitor)
    }
}

struct WorkloadVisitor;

impl<'de> Visitor<'de> for WorkloadVisitor {
    type Value = WorkloadSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a [workload] table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WorkloadSpec, A::Error> {
        let mut w = WorkloadSpec::default();
        while let Some(key) = map.next_key()? {
            match key {
                WorkloadKey::Plain(0) => w.scale = map.next_value()?,
                WorkloadKey::Plain(1) => w.lock_target = map.next_value()?,
                WorkloadKey::Plain(2) => w.mm = map.next_value()?,
                WorkloadKey::Plain(3) => w.cond_resched = map.next_value()?,
                WorkloadKey::Plain(_) => w.fault_lock = map.next_value()?,
                WorkloadKey::Role(role) => w.roles[role] = map.next_value()?,
            }
        }
        Ok(w)
    }
}

/// Which locks `--lock` sets: the lock the run studies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StudiedLock {
    /// The rmap locks: every root anon_vma rwsem and i_mmap_rwsem.
    #[default]
    Rmap,
    /// Every mm's mmap_lock (seeds 000-002 are about mmap_sem).
    MmapLock,
}

/// What a page fault locks to find and use its vma (do_user_addr_fault).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultLock {
    /// mmap_lock READ, as every kernel before 6.4.
    #[default]
    MmapLock,
    /// Per-VMA locks (6.4+, lock_vma_under_rcu): the vma's own lock READ,
    /// falling back to mmap_lock READ when that fails or the fault must
    /// retry; every writer of a vma write-locks it first (fork: all of the
    /// parent's).
    PerVma,
}

/// Which tasks the per-task roles work on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MmChoice {
    /// Any live task, picked at random per operation.
    #[default]
    Any,
    /// Only the first ancestor: many threads of one process (seeds 000-002).
    Ancestor,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleSpec {
    #[serde(default)]
    pub threads: u32,
    #[serde(default)]
    pub think_us: u64,
    #[serde(default)]
    pub work_ns: u64,
    /// reclaim: trylock the root and keep the page on contention (2022+).
    pub try_lock: Option<bool>,
    /// monitor: down_read_critical instead of down_read (seed 002).
    pub read_critical: Option<bool>,
    /// touch: a fault holds mmap_lock for read while "waiting on disk", us.
    pub disk_us: Option<u64>,
    /// touch: percent of touches that write (a write to a COW-shared page
    /// allocates a private copy: the allocations that drive memory pressure).
    pub write_pct: Option<u32>,
    /// mprotect: first re-mmap the vma with MAP_FIXED (discarding its pages,
    /// so the next touches fault), as seed 000's arena trimming does.
    pub remap: Option<bool>,
    /// fork_exit: fork a child of any live task, the child exiting at once
    /// (AIM7's fork_test: every job forks), instead of replacing the
    /// ancestor's children with new ones.
    pub any_parent: Option<bool>,
    /// munmap: downgrade mmap_lock to READ before unlinking the vmas, as
    /// __do_munmap did from 4.20 (synchro-test's downgrader).
    pub downgrade: Option<bool>,
}

impl WorkloadSpec {
    /// Total threads over all roles.
    pub fn threads(&self) -> u32 {
        self.roles.iter().map(|(_, r)| r.threads).sum()
    }

    /// Threads of the scaled role: the run's x value.
    pub fn scaled_threads(&self) -> u32 {
        self.roles[self.scale].threads
    }

    pub fn validate(&self, files: u32) -> Result<(), KeyError> {
        for role in Role::ALL {
            self.validate_role(role)?;
        }
        for role in [Role::Execl, Role::Munmap] {
            if self.roles[role].threads > 0 && files == 0 {
                return Err(err(
                    &format!("{role}.threads"),
                    format!("{role} maps files but world.files = 0"),
                    "0 when world.files = 0",
                ));
            }
        }
        Ok(())
    }

    fn validate_role(&self, role: Role) -> Result<(), KeyError> {
        let r = &self.roles[role];
        let key = |k: &str| format!("{role}.{k}");
        if r.threads > MAX_THREADS {
            return Err(err(
                &key("threads"),
                format!("{} is out of range", r.threads),
                format!("0..={MAX_THREADS}"),
            ));
        }
        if r.think_us > MAX_US {
            return Err(err(
                &key("think_us"),
                format!("{} is out of range", r.think_us),
                format!("0..={MAX_US}"),
            ));
        }
        if r.work_ns > MAX_NS {
            return Err(err(
                &key("work_ns"),
                format!("{} is out of range", r.work_ns),
                format!("0..={MAX_NS}"),
            ));
        }
        if r.write_pct.is_some_and(|p| p > 100) {
            return Err(err(&key("write_pct"), "is out of range", "0..=100"));
        }
        if r.disk_us.is_some_and(|d| d > MAX_US) {
            return Err(err(
                &key("disk_us"),
                "is out of range",
                format!("0..={MAX_US}"),
            ));
        }
        let only: [(&str, bool, &[Role]); 8] = [
            ("work_ns", r.work_ns > 0, &[Role::Reclaim, Role::Monitor]),
            ("try_lock", r.try_lock.is_some(), &[Role::Reclaim]),
            ("read_critical", r.read_critical.is_some(), &[Role::Monitor]),
            ("disk_us", r.disk_us.is_some(), &[Role::Touch]),
            ("write_pct", r.write_pct.is_some(), &[Role::Touch]),
            ("remap", r.remap.is_some(), &[Role::Mprotect]),
            ("downgrade", r.downgrade.is_some(), &[Role::Munmap]),
            ("any_parent", r.any_parent.is_some(), &[Role::ForkExit]),
        ];
        for (field, set, owners) in only {
            if set && !owners.contains(&role) {
                let places: Vec<String> =
                    owners.iter().map(|o| format!("[workload.{o}]")).collect();
                return Err(err(
                    &key(field),
                    "unknown key for this role",
                    format!("{field} only in {}", places.join(" or ")),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    #[serde(default)]
    pub budget_pages: u64,
    #[serde(default)]
    pub min_pages: u64,
    #[serde(default)]
    pub low_pages: u64,
    #[serde(default)]
    pub high_pages: u64,
    #[serde(default = "default_batch")]
    pub reclaim_batch: u32,
}

impl Default for MemorySpec {
    fn default() -> Self {
        toml::from_str("").expect("every field has a default")
    }
}

// SWAP_CLUSTER_MAX (include/linux/swap.h): pages one reclaim pass isolates.
fn default_batch() -> u32 {
    32
}

impl MemorySpec {
    /// Whether the model has a page budget at all.
    pub fn limited(&self) -> bool {
        self.budget_pages > 0
    }

    /// Watermarks must nest inside the budget. A budget larger than the world
    /// can ever hold is allowed: that machine just never feels pressure.
    pub fn validate(&self) -> Result<(), KeyError> {
        if !self.limited() {
            return Ok(());
        }
        let m = |key: &str, msg: String, allowed: String| {
            Err(KeyError {
                key: format!("memory.{key}"),
                message: msg,
                allowed,
            })
        };
        if self.budget_pages > MAX_BUDGET {
            return m(
                "budget_pages",
                format!("{} is out of range", self.budget_pages),
                format!("0..={MAX_BUDGET}"),
            );
        }
        if !(self.min_pages <= self.low_pages && self.low_pages <= self.high_pages) {
            return m(
                "low_pages",
                format!(
                    "watermarks min {} <= low {} <= high {} do not nest",
                    self.min_pages, self.low_pages, self.high_pages
                ),
                "min_pages <= low_pages <= high_pages".into(),
            );
        }
        if self.high_pages >= self.budget_pages {
            return m(
                "high_pages",
                format!("{} is not below the budget", self.high_pages),
                format!("0..{}", self.budget_pages),
            );
        }
        if !(1..=4096).contains(&self.reclaim_batch) {
            return m(
                "reclaim_batch",
                format!("{} is out of range", self.reclaim_batch),
                "1..=4096".into(),
            );
        }
        Ok(())
    }
}

/// What a `[workload]` or `[memory]` key allows, for type errors about it.
pub fn allowed(path: &str) -> Option<String> {
    let last = path.rsplit('.').next()?;
    Some(match last {
        "threads" => format!("0..={MAX_THREADS}"),
        "write_pct" => "0..=100".into(),
        "think_us" | "disk_us" => format!("0..={MAX_US}"),
        "work_ns" => format!("0..={MAX_NS}"),
        "try_lock" | "read_critical" | "remap" | "downgrade" | "any_parent" | "cond_resched" => {
            "true, false".into()
        }
        "scale" => Role::names(),
        "lock_target" => "rmap, mmap_lock".into(),
        "mm" => "any, ancestor".into(),
        "fault_lock" => "mmap_lock, per_vma".into(),
        "budget_pages" | "min_pages" | "low_pages" | "high_pages" => "a page count".into(),
        "reclaim_batch" => "1..=4096".into(),
        _ if path.starts_with("workload.") => format!(
            "{}, [workload.ROLE] for ROLE in {}",
            PLAIN_KEYS.join(", "),
            Role::names()
        ),
        _ => "budget_pages, min_pages, low_pages, high_pages, reclaim_batch".into(),
    })
}

fn err(key: &str, message: impl Into<String>, allowed: impl Into<String>) -> KeyError {
    KeyError {
        key: format!("workload.{key}"),
        message: message.into(),
        allowed: allowed.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> WorkloadSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_scale_reclaim_on_rmap_locks() {
        let w = WorkloadSpec::default();
        assert_eq!(
            (w.scale, w.lock_target, w.mm),
            (Role::Reclaim, StudiedLock::Rmap, MmChoice::Any)
        );
        assert!(w.validate(0).is_ok());
        assert_eq!(w.threads(), 0);
    }

    #[test]
    fn role_only_keys_are_refused_elsewhere() {
        let w = spec("[touch]\nthreads = 1\ntry_lock = true\n");
        let e = w.validate(0).unwrap_err();
        assert_eq!(e.key, "workload.touch.try_lock");
        assert!(e.allowed.contains("[workload.reclaim]"));
        assert!(
            spec("[reclaim]\nthreads = 1\ntry_lock = true\n")
                .validate(0)
                .is_ok()
        );
    }

    #[test]
    fn ranges_and_cross_checks() {
        assert_eq!(
            spec("[reclaim]\nthreads = 5000\n")
                .validate(0)
                .unwrap_err()
                .key,
            "workload.reclaim.threads"
        );
        let bad_scale = toml::from_str::<WorkloadSpec>("scale = \"nope\"\n").unwrap_err();
        assert!(
            bad_scale.message().contains("'nope' is not a role"),
            "{bad_scale}"
        );
        assert_eq!(
            spec("[execl]\nthreads = 1\n").validate(0).unwrap_err().key,
            "workload.execl.threads"
        );
        assert!(spec("[execl]\nthreads = 1\n").validate(1).is_ok());
    }

    #[test]
    fn role_tables_land_on_their_role_and_unknown_keys_name_every_key() {
        let w = spec("scale = \"touch\"\n[touch]\nthreads = 3\n[monitor]\nthreads = 1\n");
        assert_eq!(
            (w.scale, w.scaled_threads(), w.threads()),
            (Role::Touch, 3, 4)
        );
        assert_eq!(w.roles[Role::Monitor].threads, 1);
        let e = toml::from_str::<WorkloadSpec>("[bogus]\nthreads = 1\n").unwrap_err();
        assert!(
            e.message().starts_with(
                "unknown field `bogus`, expected one of `scale`, `lock_target`, `mm`, \
                 `cond_resched`, `fault_lock`, `reclaim`, `fork_exit`, `touch`, `mprotect`, `execl`, `monitor`, `munmap`"
            ),
            "{e}"
        );
    }

    #[test]
    fn watermarks_nest_inside_the_budget() {
        let m = |t: &str| toml::from_str::<MemorySpec>(t).unwrap();
        assert!(m("").validate().is_ok());
        assert!(
            m("budget_pages = 100\nmin_pages = 1\nlow_pages = 2\nhigh_pages = 3\n")
                .validate()
                .is_ok()
        );
        let e = m("budget_pages = 100\nmin_pages = 5\nlow_pages = 2\nhigh_pages = 3\n")
            .validate()
            .unwrap_err();
        assert_eq!(e.key, "memory.low_pages");
        let e = m("budget_pages = 100\nhigh_pages = 100\n")
            .validate()
            .unwrap_err();
        assert_eq!(e.key, "memory.high_pages");
        let e = m("budget_pages = 2000000000000\n").validate().unwrap_err();
        assert_eq!(e.key, "memory.budget_pages");
    }
}
