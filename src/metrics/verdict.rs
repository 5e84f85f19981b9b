//! The run's progress verdict: `ok`, `starved ROLE` or `livelock`.
//!
//! A monitor samples every role's done operations (failed and given-up ones
//! are no progress) and the process's CPU time once per window (the watchdog
//! window). The rules, in order:
//!
//! 0. **starved ROLE** — a role tried and never got an operation done: every
//!    attempt failed or gave up (a touch that finds no free page, a try_lock
//!    walk that always meets a writer). Checked first, so the verdict names
//!    the cause rather than the empty windows it leaves.
//! 1. **livelock** — some role made no progress for a whole window (after the
//!    first, which is warm-up) while the CPUs were at least [`BUSY`] busy: its
//!    waiters burned CPU and nothing of that role got done, the AIM7 picture of
//!    every CPU spinning in page_referenced. A role whose operations normally take
//!    longer than half a window (long think time, long walks) is not judged by an
//!    empty window. A run the watchdog had to cut off while the CPUs were busy is
//!    a livelock too.
//! 2. **starved ROLE** — a role got under 1% of its fair share: its threads spent
//!    more than [`STARVED_WAIT`] of their time waiting for locks, or it completed
//!    nothing at all.
//! 3. **ok** otherwise.

use crate::results::Verdict;

/// CPU busy share (of the cores the run could use) that counts as "burning CPU".
pub const BUSY: f64 = 0.9;
/// Share of time spent waiting above which a role got under 1% of its time.
pub const STARVED_WAIT: f64 = 0.99;

/// What the monitor saw of one role.
#[derive(Clone, Debug, Default)]
pub struct RoleProgress {
    pub name: String,
    pub threads: u32,
    /// Operations completed in each window.
    pub ops_per_window: Vec<u64>,
    /// Mean latency of one operation over the run, ns (0 if none completed).
    pub mean_op_ns: f64,
    /// Share of the role's thread time spent waiting for locks, 0..1.
    pub wait_share: f64,
    /// Operations that failed, over the run.
    pub failed: u64,
    /// Operations that gave up on a contended try_lock, over the run.
    pub gave_up: u64,
}

/// What the monitor saw of the whole run.
#[derive(Clone, Debug, Default)]
pub struct RunProgress {
    pub window_ns: u64,
    /// CPU busy share per window, 0..1 of usable cores.
    pub cpu_busy: Vec<f64>,
    pub roles: Vec<RoleProgress>,
    /// The watchdog cut the run off at twice its duration.
    pub watchdog_fired: bool,
}

/// Apply the rules above.
pub fn judge(run: &RunProgress) -> Verdict {
    let active = || run.roles.iter().filter(|r| r.threads > 0);
    let never_done =
        active().find(|r| r.ops_per_window.iter().all(|&n| n == 0) && r.failed + r.gave_up > 0);
    if let Some(role) = never_done {
        return Verdict::Starved {
            role: role.name.clone(),
            reason: format!(
                "no operation done: {} failed, {} gave up",
                role.failed, role.gave_up
            ),
        };
    }
    if let Some(reason) = livelock(run) {
        return Verdict::Livelock { reason };
    }
    for role in active() {
        let total: u64 = role.ops_per_window.iter().sum();
        if total == 0 {
            return Verdict::Starved {
                role: role.name.clone(),
                reason: "no operation completed".into(),
            };
        }
        if role.wait_share > STARVED_WAIT {
            let reason = format!(
                "{:.1}% of its time waiting for locks",
                role.wait_share * 100.0
            );
            return Verdict::Starved {
                role: role.name.clone(),
                reason,
            };
        }
    }
    Verdict::Ok
}

fn livelock(run: &RunProgress) -> Option<String> {
    let last_busy = run.cpu_busy.last().copied().unwrap_or(0.0);
    if run.watchdog_fired && last_busy >= BUSY {
        return Some(format!(
            "watchdog cut the run off at 2x duration with CPUs {:.0}% busy",
            last_busy * 100.0
        ));
    }
    let half_window = run.window_ns as f64 / 2.0;
    for (w, &busy) in run.cpu_busy.iter().enumerate().skip(1) {
        if busy < BUSY {
            continue;
        }
        let stalled = run.roles.iter().find(|r| {
            r.threads > 0 && r.mean_op_ns < half_window && r.ops_per_window.get(w) == Some(&0)
        });
        if let Some(role) = stalled {
            return Some(format!(
                "{} made no progress for {} ms (window {}) while CPUs were {:.0}% busy",
                role.name,
                run.window_ns / 1_000_000,
                w,
                busy * 100.0
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(name: &str, ops: &[u64], mean_op_ns: f64, wait_share: f64) -> RoleProgress {
        RoleProgress {
            name: name.into(),
            threads: 2,
            ops_per_window: ops.to_vec(),
            mean_op_ns,
            wait_share,
            failed: 0,
            gave_up: 0,
        }
    }

    fn run(cpu: &[f64], roles: Vec<RoleProgress>) -> RunProgress {
        RunProgress {
            window_ns: 100_000_000,
            cpu_busy: cpu.to_vec(),
            roles,
            watchdog_fired: false,
        }
    }

    #[test]
    fn steady_progress_is_ok() {
        let r = run(
            &[1.0, 1.0, 1.0],
            vec![
                role("reclaim", &[5, 5, 5], 1e3, 0.5),
                role("touch", &[9, 9, 9], 1e3, 0.1),
            ],
        );
        assert_eq!(judge(&r), Verdict::Ok);
    }

    #[test]
    fn a_stalled_role_on_busy_cpus_is_livelock() {
        let r = run(
            &[1.0, 0.95, 1.0],
            vec![
                role("reclaim", &[5, 5, 5], 1e3, 0.9),
                role("touch", &[9, 0, 3], 1e3, 0.5),
            ],
        );
        assert!(matches!(judge(&r), Verdict::Livelock { reason } if reason.starts_with("touch")));
    }

    #[test]
    fn a_stalled_role_on_idle_cpus_is_not_livelock() {
        let r = run(&[1.0, 0.2, 0.2], vec![role("touch", &[9, 0, 0], 1e3, 0.5)]);
        assert_eq!(judge(&r), Verdict::Ok);
    }

    #[test]
    fn an_empty_first_window_is_warm_up() {
        let r = run(&[1.0, 1.0], vec![role("touch", &[0, 4], 1e3, 0.5)]);
        assert_eq!(judge(&r), Verdict::Ok);
    }

    #[test]
    fn slow_operations_are_not_judged_by_one_empty_window() {
        // Each op takes 80 ms against a 100 ms window: an empty window is normal.
        let r = run(
            &[1.0, 1.0, 1.0],
            vec![role("monitor", &[1, 0, 1], 8e7, 0.1)],
        );
        assert_eq!(judge(&r), Verdict::Ok);
    }

    #[test]
    fn watchdog_on_busy_cpus_is_livelock() {
        let mut r = run(&[1.0], vec![role("reclaim", &[3], 1e3, 0.5)]);
        r.watchdog_fired = true;
        assert!(matches!(judge(&r), Verdict::Livelock { .. }));
    }

    #[test]
    fn a_role_waiting_almost_always_is_starved() {
        let r = run(
            &[0.5, 0.5],
            vec![
                role("reclaim", &[5, 5], 1e3, 0.2),
                role("fork-exit", &[1, 1], 1e3, 0.995),
            ],
        );
        assert!(matches!(judge(&r), Verdict::Starved { role, .. } if role == "fork-exit"));
    }

    #[test]
    fn a_role_that_never_completed_is_starved() {
        let r = run(&[0.5, 0.5], vec![role("monitor", &[0, 0], 0.0, 0.5)]);
        assert!(matches!(judge(&r), Verdict::Starved { role, .. } if role == "monitor"));
    }

    #[test]
    fn a_role_whose_every_attempt_failed_is_starved_even_on_busy_cpus() {
        let mut failing = role("touch", &[0, 0, 0], 0.0, 0.0);
        failing.failed = 900;
        let r = run(
            &[1.0, 1.0, 1.0],
            vec![role("reclaim", &[5, 5, 5], 1e3, 0.1), failing],
        );
        match judge(&r) {
            Verdict::Starved { role, reason } => {
                assert_eq!(role, "touch");
                assert_eq!(reason, "no operation done: 900 failed, 0 gave up");
            }
            other => panic!("{other:?}"),
        }
        // One done operation is progress: failures alone do not starve it.
        let mut some = role("touch", &[0, 1, 0], 1e3, 0.0);
        some.gave_up = 50;
        assert_eq!(judge(&run(&[0.5, 0.5, 0.5], vec![some])), Verdict::Ok);
    }

    #[test]
    fn roles_without_threads_are_ignored() {
        let mut idle = role("execl", &[0, 0], 0.0, 0.0);
        idle.threads = 0;
        let r = run(&[1.0, 1.0], vec![idle, role("reclaim", &[5, 5], 1e3, 0.1)]);
        assert_eq!(judge(&r), Verdict::Ok);
    }
}
