//! Which role and which lock class a sweep's one-number-per-run figures (the
//! CSV's wait_share, the plots) describe, when a run reports several.

use crate::model::Role;
use crate::results::{LockClassReport, RunReport};

/// The role plotted by default: kswapd's work, the thing the storm is about.
pub const DEFAULT_ROLE: &str = Role::Reclaim.name();

/// The lock class whose wait share summarises a run: `anon_vma` (the root lock
/// the storm is about) when the run has it, else the class with the most
/// acquisitions (the first by name on a tie).
pub fn main_lock_class(report: &RunReport) -> Option<(&str, &LockClassReport)> {
    if let Some(class) = report.lock_stats.get("anon_vma") {
        return Some(("anon_vma", class));
    }
    let acquisitions = |c: &LockClassReport| c.acquire_read + c.acquire_write;
    // max_by_key keeps the last maximum; iterate in reverse name order so the
    // first name wins a tie.
    report
        .lock_stats
        .iter()
        .rev()
        .max_by_key(|(_, class)| acquisitions(class))
        .map(|(name, class)| (name.as_str(), class))
}

/// The role a sweep's plots show by default: `reclaim` when any run has it;
/// else the model's scaled role, recognised as the first role (by name) whose
/// thread count equals the run's scaled `threads` in every run; else the first
/// role by name.
pub fn default_role<'a>(reports: impl Iterator<Item = &'a RunReport> + Clone) -> Option<String> {
    let roles = roles(reports.clone());
    if roles.contains(&DEFAULT_ROLE) {
        return Some(DEFAULT_ROLE.to_string());
    }
    let scaled = |role: &str| {
        reports
            .clone()
            .all(|r| r.roles.get(role).is_some_and(|rr| rr.threads == r.threads))
    };
    roles
        .iter()
        .find(|role| scaled(role))
        .or(roles.first())
        .map(|role| role.to_string())
}

/// Every role any of `reports` has, by name.
pub fn roles<'a>(reports: impl Iterator<Item = &'a RunReport>) -> Vec<&'a str> {
    let mut roles: Vec<&str> = reports
        .flat_map(|r| r.roles.keys())
        .map(String::as_str)
        .collect();
    roles.sort();
    roles.dedup();
    roles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::LockKind;
    use crate::results::{CtxSwitches, MemoryReport, RoleReport, Verdict};
    use std::collections::BTreeMap;

    fn report(threads: u32, roles: &[(&str, u32)], classes: &[(&str, u64)]) -> RunReport {
        let role = |t: u32| RoleReport {
            threads: t,
            ..RoleReport::default()
        };
        let class = |acquires: u64| LockClassReport {
            acquire_read: acquires,
            ..LockClassReport::default()
        };
        RunReport {
            schema: 1,
            model: "m.toml".into(),
            engine: "fake".into(),
            lock: LockKind::Rwsem,
            threads,
            cpus: 0,
            duration_s: 1.0,
            seed: 1,
            overrides: vec![],
            roles: roles
                .iter()
                .map(|&(n, t)| (n.to_string(), role(t)))
                .collect(),
            lock_stats: classes
                .iter()
                .map(|&(n, a)| (n.to_string(), class(a)))
                .collect(),
            ctx_switches: CtxSwitches::default(),
            fairness: BTreeMap::new(),
            memory: MemoryReport::default(),
            verdict: Verdict::Ok,
            sim: None,
        }
    }

    #[test]
    fn main_class_is_anon_vma_else_the_busiest_else_the_first_name() {
        let with = report(1, &[], &[("anon_vma", 1), ("mmap_lock", 9)]);
        assert_eq!(main_lock_class(&with).unwrap().0, "anon_vma");
        let busiest = report(1, &[], &[("i_mmap", 3), ("mmap_lock", 9)]);
        assert_eq!(main_lock_class(&busiest).unwrap().0, "mmap_lock");
        let tie = report(1, &[], &[("i_mmap", 9), ("mmap_lock", 9)]);
        assert_eq!(main_lock_class(&tie).unwrap().0, "i_mmap");
        assert_eq!(main_lock_class(&report(1, &[], &[])), None);
    }

    #[test]
    fn default_role_is_reclaim_else_the_scaled_one() {
        let reclaim = [report(2, &[("reclaim", 1), ("touch", 2)], &[])];
        assert_eq!(default_role(reclaim.iter()).as_deref(), Some("reclaim"));
        // touch follows the run's threads in both runs; monitor only in one.
        let scaled = [
            report(2, &[("monitor", 2), ("touch", 2)], &[]),
            report(4, &[("monitor", 2), ("touch", 4)], &[]),
        ];
        assert_eq!(default_role(scaled.iter()).as_deref(), Some("touch"));
        let neither = [report(8, &[("writer", 1), ("reader", 2)], &[])];
        assert_eq!(default_role(neither.iter()).as_deref(), Some("reader"));
        assert_eq!(roles(scaled.iter()), ["monitor", "touch"]);
    }
}
