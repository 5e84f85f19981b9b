//! A run as the terminal shows it: one table per concern, every figure with
//! its unit, the verdict last.

use super::units::{fmt_ns, fmt_rate};
use crate::model::Role;
use crate::results::{RunReport, Verdict};
use std::fmt::Write;

pub fn render(r: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run: {} | engine {} | lock {} | {} scaled threads | {:.2} s{} | seed {}",
        r.model,
        r.engine,
        r.lock,
        r.threads,
        r.duration_s,
        if r.sim.is_some() { " (virtual)" } else { "" },
        r.seed
    );
    for o in &r.overrides {
        let _ = writeln!(out, "  --set {o}");
    }
    roles(&mut out, r);
    locks(&mut out, r);
    memory(&mut out, r);
    let _ = writeln!(
        out,
        "context switches: {} voluntary, {} involuntary",
        fmt_rate(r.ctx_switches.voluntary_per_s),
        fmt_rate(r.ctx_switches.involuntary_per_s)
    );
    if let Some(sim) = &r.sim {
        let _ = writeln!(
            out,
            "sim: {} virtual CPUs of {}, preempt {}; {} events in {:.2} s wall ({:.2} M events/s), {} lines, peak RSS {:.0} MiB",
            sim.cpus,
            sim.machine,
            sim.preempt,
            sim.events,
            sim.wall_s,
            sim.events_per_s / 1e6,
            sim.lines,
            sim.peak_rss_mib
        );
    }
    let _ = writeln!(out, "{}", r.verdict);
    if !matches!(r.verdict, Verdict::Ok) {
        let _ = writeln!(
            out,
            "  (rules: livelock = a role made no progress for a whole window while CPUs were >= 90% busy; starved = a role waited > 99% of its time or got no operation done)"
        );
    }
    out
}

/// One row per role. `ops`, `ops/s`, the latencies and `vmas/op` count done
/// operations only; `failed` and `gave up` are the attempts that were not.
fn roles(out: &mut String, r: &RunReport) {
    let _ = writeln!(
        out,
        "\n{:<10} {:>7} {:>6} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6} {:>15} {:>8}",
        "role",
        "threads",
        "CPUs",
        "ops",
        "failed",
        "gave up",
        "ops/s",
        "p50",
        "p99",
        "p99.9",
        "max",
        "vmas/op",
        "jain",
        "max/min",
        "direct%"
    );
    for (name, role) in &r.roles {
        let f = r.fairness.get(name).cloned().unwrap_or_default();
        let mark = if f.starved_mark { " ???" } else { "" };
        let l = role.latency_ns;
        let _ = writeln!(
            out,
            "{:<10} {:>7} {:>6.2} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8.1} {:>6.3} {:>15} {:>7.1}%",
            name,
            role.threads,
            role.cpus_used,
            role.ops,
            role.failed,
            role.gave_up,
            fmt_rate(role.ops_per_s),
            fmt_ns(l.p50),
            fmt_ns(l.p99),
            fmt_ns(l.p999),
            fmt_ns(l.max),
            role.vmas_per_op,
            f.jain,
            format!("{}/{}{mark}", f.max, f.min),
            role.direct_reclaim_share * 100.0
        );
    }
}

fn locks(out: &mut String, r: &RunReport) {
    let _ = writeln!(
        out,
        "\n{:<10} {:>11} {:>11} {:>10} {:>8} {:>9} {:>14}",
        "lock", "acq read", "acq write", "contended", "waiting", "max wait", "readers inside"
    );
    for (name, c) in &r.lock_stats {
        if c.acquire_read + c.acquire_write == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{:<10} {:>11} {:>11} {:>9.1}% {:>7.1}% {:>9} {:>14.2}",
            name,
            c.acquire_read,
            c.acquire_write,
            c.contended_pct,
            c.wait_share * 100.0,
            fmt_ns(c.max_wait_ns),
            c.mean_readers
        );
    }
}

/// The roles whose done operations are the useful work, `fork_exit + touch`.
/// The memory line, then the reclaim series (a run of two seconds or more)
/// and the per-VMA lock events (when faults used them).
fn memory(out: &mut String, r: &RunReport) {
    let m = &r.memory;
    let _ = writeln!(
        out,
        "\nmemory: {} pages reclaimed ({}), {} direct-reclaim entries ({} throttled); \
         {:.2} pages scanned per page reclaimed; swap-ins {}, swap-cache hits {}; \
         lru_lock wait {:.2}% of thread time; useful work ({}) {}",
        m.pages_reclaimed,
        fmt_rate(m.pages_reclaimed_per_s),
        m.direct_reclaim_entries,
        m.throttled,
        m.scanned_per_reclaimed,
        fmt_rate(m.swapins_per_s),
        fmt_rate(m.swap_cache_hits_per_s),
        100.0 * m.lru_lock_wait_share,
        useful_roles(),
        fmt_rate(m.useful_ops_per_s)
    );
    if m.reclaimed_by_second.len() > 1 {
        let series: Vec<String> = m.reclaimed_by_second.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "pages reclaimed in each second: {} (pages)",
            series.join(" ")
        );
    }
    let v = &m.vma_lock;
    if v.success + v.abort + v.retry + v.miss > 0 {
        let _ = writeln!(
            out,
            "vma locks (faults): {} success, {} abort, {} retry, {} miss (events)",
            v.success, v.abort, v.retry, v.miss
        );
    }
}

fn useful_roles() -> String {
    let names: Vec<&str> = Role::ALL
        .into_iter()
        .filter(|r| r.useful())
        .map(Role::name)
        .collect();
    names.join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::LockKind;
    use crate::results::run::VmaLockReport;
    use crate::results::{CtxSwitches, MemoryReport, RoleReport};
    use std::collections::BTreeMap;

    #[test]
    fn the_role_table_has_cpus_used_failed_and_gave_up_columns() {
        let touch = RoleReport {
            threads: 1,
            cpus_used: 0.375,
            ops: 3,
            failed: 41,
            gave_up: 5,
            ..RoleReport::default()
        };
        let r = RunReport {
            schema: crate::results::SCHEMA,
            model: "m.toml".into(),
            engine: "test".into(),
            lock: LockKind::Rwsem,
            threads: 1,
            cpus: 0,
            duration_s: 1.0,
            seed: 1,
            overrides: vec![],
            roles: BTreeMap::from([("touch".to_string(), touch)]),
            lock_stats: BTreeMap::new(),
            ctx_switches: CtxSwitches::default(),
            fairness: BTreeMap::new(),
            memory: MemoryReport::default(),
            verdict: Verdict::Ok,
            sim: None,
        };
        let text = render(&r);
        let header = text.lines().find(|l| l.starts_with("role")).unwrap();
        let row = text.lines().find(|l| l.starts_with("touch")).unwrap();
        let words: Vec<&str> = row.split_whitespace().collect();
        assert!(
            header.contains("CPUs        ops     failed    gave up"),
            "{header}"
        );
        assert_eq!(&words[..6], ["touch", "1", "0.38", "3", "41", "5"], "{row}");
        assert!(text.contains("useful work (fork_exit + touch)"), "{text}");
    }

    #[test]
    fn the_memory_line_has_swap_churn_and_vma_lock_figures_with_units() {
        let mut r = report_with(MemoryReport {
            pages_reclaimed: 30,
            pages_reclaimed_per_s: 15.0,
            reclaimed_by_second: vec![20, 10],
            scanned_per_reclaimed: 2.5,
            swapins_per_s: 12_000.0,
            swap_cache_hits_per_s: 3.0,
            throttled: 2,
            lru_lock_wait_share: 0.0125,
            ..MemoryReport::default()
        });
        let text = render(&r);
        let line = text.lines().find(|l| l.starts_with("memory:")).unwrap();
        for want in [
            "30 pages reclaimed (15.0/s)",
            "(2 throttled)",
            "2.50 pages scanned per page reclaimed",
            "swap-ins 12.0k/s, swap-cache hits 3.0/s",
            "lru_lock wait 1.25% of thread time",
        ] {
            assert!(line.contains(want), "{want:?} not in {line}");
        }
        assert!(
            text.contains("pages reclaimed in each second: 20 10 (pages)"),
            "{text}"
        );
        assert!(
            !text.contains("vma locks"),
            "no per-VMA faults, no line: {text}"
        );
        r.memory.vma_lock = VmaLockReport {
            success: 7,
            abort: 1,
            retry: 2,
            miss: 0,
        };
        let text = render(&r);
        assert!(
            text.contains("vma locks (faults): 7 success, 1 abort, 2 retry, 0 miss (events)"),
            "{text}"
        );
    }

    fn report_with(memory: MemoryReport) -> RunReport {
        RunReport {
            schema: crate::results::SCHEMA,
            model: "m.toml".into(),
            engine: "test".into(),
            lock: LockKind::Rwsem,
            threads: 1,
            cpus: 1,
            duration_s: 2.0,
            seed: 1,
            overrides: vec![],
            roles: BTreeMap::new(),
            lock_stats: BTreeMap::new(),
            ctx_switches: CtxSwitches::default(),
            fairness: BTreeMap::new(),
            memory,
            verdict: Verdict::Ok,
            sim: None,
        }
    }
}
