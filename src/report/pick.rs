//! Which role and which lock class a sweep's one-number-per-run figures (the
//! CSV's wait_share, the plots) describe, when a run reports several.

use super::run::{LockClassReport, RunReport};

/// The role plotted by default: kswapd's work, the thing the storm is about.
pub const DEFAULT_ROLE: &str = "reclaim";

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
    let mut roles = reports
        .clone()
        .flat_map(|r| r.roles.keys())
        .collect::<Vec<_>>();
    roles.sort();
    roles.dedup();
    if roles.iter().any(|r| r.as_str() == DEFAULT_ROLE) {
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
