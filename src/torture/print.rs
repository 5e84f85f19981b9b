//! The torture report, in the formats its readers already know.
//!
//! - locktorture's two summary lines (kernel/locking/locktorture.c,
//!   __torture_print_stats, format `"%s:  Total: %lld  Max/Min: %ld/%ld %s  Fail: %d %s"`),
//!   with trailing blanks trimmed. One difference: the kernel prints `Fail:` as 0
//!   or 1 (whether any thread failed); we print the number of failed acquisitions.
//! - synchro-test's table row (seed 002, `"%3d %3d %3d %3d %3d %c %5s %9u ..."`)
//!   under its four header lines.
//! - then what neither prints: per-role fairness and acquire latency, the lock's
//!   own counters, context switches, and what the watchdog found.

use super::{Config, End, Engine, Outcome, Role};
use crate::engine::sim::SimSpec;
use crate::engine::sim::run::Ended;
use crate::locks::stats::{Event, LockClass};
use crate::metrics;
use crate::report::units::fmt_ns;
use std::fmt::Write;
use std::time::Duration;

/// The whole report, one line per `\n`.
pub fn render(o: &Outcome) -> String {
    let mut s = String::new();
    s += &header(&o.config, o.elapsed);
    s += "\n";
    if let (Engine::Sim(spec), Some(ended)) = (&o.config.engine, &o.sim) {
        s += &sim_line(spec, ended);
        s += "\n";
    }
    for writes in [true, false] {
        let (label, counts, fails) = line_figures(o, writes);
        s += &locktorture_line(label, &counts, fails);
        s += "\n";
    }
    s += "\n";
    s += &synchro_table(o);
    s += "\n";
    s += &role_table(o);
    s += &lock_line(o);
    s += "\n";
    s += &ctx_line(o);
    s += "\n";
    if let Some(w) = watchdog_line(o) {
        s += &w;
        s += "\n";
    }
    s
}

fn header(cfg: &Config, elapsed: Duration) -> String {
    let roles: Vec<String> = Role::ALL
        .iter()
        .map(|&r| format!("{} {}", cfg.threads(r), r.name()))
        .collect();
    let times = if cfg.exponential {
        "exponential, means"
    } else {
        "fixed,"
    };
    let clock = match cfg.engine {
        Engine::Native => "",
        Engine::Sim(_) => " (virtual)",
    };
    format!(
        "torture: lock {}, {}; ran {}{clock}, {times} load {}, interval {}, sched {}",
        cfg.kind,
        roles.join(", "),
        fmt_ns(elapsed.as_nanos() as u64),
        fmt_ns(cfg.load.as_nanos() as u64),
        fmt_ns(cfg.interval.as_nanos() as u64),
        if cfg.sched { "on" } else { "off" }
    )
}

/// The simulated machine and what simulating it took.
fn sim_line(spec: &SimSpec, e: &Ended) -> String {
    let wall = e.wall.as_secs_f64();
    format!(
        "sim: {} virtual CPUs of {}, preempt {}; {} events in {:.3} s wall ({:.2} M events/s), {} lines{}",
        spec.cpus,
        spec.machine.name,
        spec.preempt.name(),
        e.events,
        wall,
        e.events as f64 / wall.max(1e-9) / 1e6,
        e.lines,
        if e.cut_off {
            ", cut off by the watchdog"
        } else {
            ""
        }
    )
}

/// The label, per-thread acquisition counts and failures of locktorture's
/// `Writes:` line (writers and downgraders: both take the write lock) or its
/// `Reads :` line (readers and critical readers).
fn line_figures(o: &Outcome, writes: bool) -> (&'static str, Vec<u64>, u64) {
    let threads: Vec<_> = o
        .threads
        .iter()
        .filter(|t| t.role.writes() == writes)
        .collect();
    let label = if writes { "Writes" } else { "Reads " };
    let counts = threads.iter().map(|t| t.taken).collect();
    (label, counts, threads.iter().map(|t| t.fails).sum())
}

/// One locktorture summary line over per-thread acquisition counts: `???`
/// when max/2 > min (starvation), `!!!` when any acquisition failed.
pub fn locktorture_line(label: &str, counts: &[u64], fails: u64) -> String {
    let f = metrics::fairness(counts);
    let total: u64 = counts.iter().sum();
    let line = format!(
        "{label}:  Total: {total}  Max/Min: {}/{} {}  Fail: {fails} {}",
        f.max,
        f.min,
        if f.starved_mark { "???" } else { "" },
        if fails > 0 { "!!!" } else { "" }
    );
    line.trim_end().to_string()
}

/// synchro-test's columns: thread counts and locks taken for MTX, SEM, RD, WR, DG.
///
/// Mapping (documented in the footnotes printed under the row):
/// - RD counts readers and critical readers together (synchro-test has no
///   critical-reader column).
/// - DG TAKEN counts downgrader iterations; on a kind without downgrade_write
///   each was a plain write.
/// - SEM is always 0: no kind is a counting semaphore.
/// - MTX is 0 for reader-writer kinds. For an exclusive-only kind (spinlock,
///   qspinlock, mutex) every acquisition, read or write, took the one exclusive
///   path, as synchro-test's mutex threads do: MTX then holds the sums of the
///   RD, WR and DG columns, which still show what each role asked for.
pub fn synchro_columns(o: &Outcome) -> ([usize; 5], [u64; 5]) {
    let cfg = &o.config;
    let taken = |roles: &[Role]| -> u64 {
        o.threads
            .iter()
            .filter(|t| roles.contains(&t.role))
            .map(|t| t.taken)
            .sum()
    };
    let rd = [Role::Reader, Role::CriticalReader];
    let mut threads = [
        0,
        0,
        cfg.threads(Role::Reader) + cfg.threads(Role::CriticalReader),
        cfg.threads(Role::Writer),
        cfg.threads(Role::Downgrader),
    ];
    let mut counts = [
        0,
        0,
        taken(&rd),
        taken(&[Role::Writer]),
        taken(&[Role::Downgrader]),
    ];
    if !o.shared_readers {
        threads[0] = threads[2..].iter().sum();
        counts[0] = counts[2..].iter().sum();
    }
    (threads, counts)
}

/// synchro-test's header and one row, with footnotes for the column mapping.
pub fn synchro_table(o: &Outcome) -> String {
    let (threads, taken) = synchro_columns(o);
    let mut s = String::from(
        "      THREADS       S INTVL             LOCKS TAKEN AND RELEASED\n\
         -------------------   /LOAD -------------------------------------------------\n\
         MTX SEM RD  WR  DG          MTX TAKEN SEM TAKEN RD TAKEN  WR TAKEN  DG TAKEN\n\
         === === === === === = ===== ========= ========= ========= ========= =========\n",
    );
    let cfg = &o.config;
    let intvl_load = format!("{}/{}", cfg.interval.as_micros(), cfg.load.as_micros());
    let _ = writeln!(
        s,
        "{:3} {:3} {:3} {:3} {:3} {} {:>5} {:9} {:9} {:9} {:9} {:9}",
        threads[0],
        threads[1],
        threads[2],
        threads[3],
        threads[4],
        if cfg.sched { 's' } else { '-' },
        intvl_load,
        taken[0],
        taken[1],
        taken[2],
        taken[3],
        taken[4]
    );
    if cfg.threads(Role::CriticalReader) > 0 {
        s += "(RD includes the critical readers)\n";
    }
    if cfg.threads(Role::Downgrader) > 0 && !o.has_downgrade {
        let _ = writeln!(s, "({} has no downgrade_write: DG threads wrote)", o.kind);
    }
    if !o.shared_readers {
        let _ = writeln!(
            s,
            "({} is exclusive-only: every acquisition took the exclusive path; MTX sums RD, WR and DG)",
            o.kind
        );
    }
    s
}

/// Per role: threads, acquisitions, rate, failures, fairness and acquire latency.
fn role_table(o: &Outcome) -> String {
    let mut s = format!(
        "{:<17}{:>7}{:>11}{:>12}{:>6}  {:<19}{:>6}  {:>9}{:>9}{:>9}{:>9}\n",
        "role",
        "threads",
        "taken",
        "taken/s",
        "fail",
        "max/min",
        "jain",
        "acq p50",
        "p99",
        "p99.9",
        "max"
    );
    let secs = o.elapsed.as_secs_f64();
    for role in Role::ALL {
        let threads: Vec<_> = o.threads.iter().filter(|t| t.role == role).collect();
        if threads.is_empty() {
            continue;
        }
        let counts: Vec<u64> = threads.iter().map(|t| t.taken).collect();
        let total: u64 = counts.iter().sum();
        let fails: u64 = threads.iter().map(|t| t.fails).sum();
        let f = metrics::fairness(&counts);
        let hists = threads.iter().filter_map(|t| match &t.end {
            End::Finished { acquire_ns } => Some(acquire_ns),
            End::Stuck | End::Panicked => None,
        });
        let lat = metrics::latency(&metrics::merge(hists));
        let max_min = format!(
            "{}/{}{}",
            f.max,
            f.min,
            if f.starved_mark { " ???" } else { "" }
        );
        let _ = writeln!(
            s,
            "{:<17}{:>7}{:>11}{:>12.0}{:>6}  {:<19}{:>6.3}  {:>9}{:>9}{:>9}{:>9}",
            role.name(),
            threads.len(),
            total,
            if secs > 0.0 { total as f64 / secs } else { 0.0 },
            fails,
            max_min,
            f.jain,
            fmt_ns(lat.p50),
            fmt_ns(lat.p99),
            fmt_ns(lat.p999),
            fmt_ns(lat.max)
        );
    }
    s
}

/// The lock's own counters (locks::stats), merged over the finished threads.
fn lock_line(o: &Outcome) -> String {
    let c = o.lock.class(LockClass::AnonVma);
    let finished = o.threads.len() - o.stuck() - o.panicked();
    let thread_ns = o.elapsed.as_nanos() as u64 * finished as u64;
    let wait = metrics::latency(&c.wait_ns);
    format!(
        "lock {}: acquired {} read, {} write; contended {:.1}%; spins {}; sleeps {}; \
         handoffs {}; steals {}; reader wake batch {:.2}; wait p99 {}, max {}; \
         waiting {:.1}% of thread time",
        o.kind,
        c.get(Event::AcquireRead),
        c.get(Event::AcquireWrite),
        metrics::contended_pct(c),
        c.get(Event::Spin),
        c.get(Event::Sleep),
        c.get(Event::Handoff),
        c.get(Event::Steal),
        metrics::mean_wake_batch(c),
        fmt_ns(wait.p99),
        fmt_ns(wait.max),
        metrics::wait_share(c, thread_ns) * 100.0
    )
}

fn ctx_line(o: &Outcome) -> String {
    let rate = o.ctx.per_s(o.elapsed.as_secs_f64());
    format!(
        "context switches: {:.0}/s voluntary, {:.0}/s involuntary",
        rate.voluntary_per_s, rate.involuntary_per_s
    )
}

/// What went wrong beyond exclusion failures, if anything.
fn watchdog_line(o: &Outcome) -> Option<String> {
    let (stuck, panicked) = (o.stuck(), o.panicked());
    if stuck + panicked == 0 {
        return None;
    }
    let mut parts = Vec::new();
    for role in Role::ALL {
        let n = o
            .threads
            .iter()
            .filter(|t| t.role == role && matches!(t.end, End::Stuck))
            .count();
        if n > 0 {
            parts.push(format!("{n} {}", role.name()));
        }
    }
    Some(format!(
        "watchdog: {stuck} of {} threads still running at the watchdog, inside an acquire{}{}; \
         their lock counters and latencies are missing above",
        o.threads.len(),
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        },
        if panicked > 0 {
            format!("; {panicked} threads panicked")
        } else {
            String::new()
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locktorture_line_matches_the_kernel_format() {
        assert_eq!(
            locktorture_line("Writes", &[6, 4], 0),
            "Writes:  Total: 10  Max/Min: 6/4   Fail: 0"
        );
        assert_eq!(
            locktorture_line("Reads ", &[9, 3, 5], 0),
            "Reads :  Total: 17  Max/Min: 9/3 ???  Fail: 0"
        );
        assert_eq!(
            locktorture_line("Writes", &[3, 3], 2),
            "Writes:  Total: 6  Max/Min: 3/3   Fail: 2 !!!"
        );
        assert_eq!(
            locktorture_line("Writes", &[], 0),
            "Writes:  Total: 0  Max/Min: 0/0   Fail: 0"
        );
    }

    #[test]
    fn max_and_min_come_from_the_acquisition_counts_not_the_total() {
        // synchro-test's total() compared the running total, not each count;
        // locktorture once compared the failure counter. Neither may happen here.
        let line = locktorture_line("Reads ", &[100, 300, 200], 0);
        assert!(line.contains("Max/Min: 300/100 ???"), "{line}");
    }

    /// An outcome with the given per-thread acquisition counts (role by role
    /// in `Role::ALL` order, as the engine numbers threads).
    fn outcome(shared_readers: bool, has_downgrade: bool, taken: [&[u64]; 4]) -> Outcome {
        use crate::locks::{LockKind, stats::LockStats};
        let threads: Vec<_> = Role::ALL
            .iter()
            .zip(taken)
            .flat_map(|(&role, counts)| {
                counts.iter().map(move |&n| super::super::ThreadOutcome {
                    role,
                    taken: n,
                    fails: 0,
                    end: End::Finished {
                        acquire_ns: metrics::histogram(),
                    },
                })
            })
            .collect();
        Outcome {
            kind: LockKind::Rwsem,
            config: Config {
                kind: LockKind::Rwsem,
                threads: taken.map(|c| c.len()),
                duration: Duration::from_secs(5),
                load: Duration::from_micros(2),
                interval: Duration::from_micros(2),
                sched: true,
                exponential: false,
                seed: 0,
                engine: crate::torture::Engine::Native,
            },
            shared_readers,
            has_downgrade,
            elapsed: Duration::from_secs(5),
            threads,
            lock: LockStats::default(),
            sim: None,
            ctx: metrics::ThreadCtx::default(),
        }
    }

    #[test]
    fn synchro_row_matches_seed_002_byte_for_byte() {
        let mut readers = [0u64; 10];
        readers[0] = 2_087_911;
        let o = outcome(true, true, [&readers, &[590_000, 464], &[194_394], &[]]);
        let table = synchro_table(&o);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "MTX SEM RD  WR  DG          MTX TAKEN SEM TAKEN RD TAKEN  WR TAKEN  DG TAKEN"
        );
        assert_eq!(
            lines[4],
            "  0   0  10   2   1 s   2/2         0         0   2087911    590464    194394"
        );
        assert_eq!(lines.len(), 5, "no footnotes expected:\n{table}");
    }

    #[test]
    fn exclusive_only_kinds_sum_every_role_into_mtx() {
        let o = outcome(false, false, [&[10, 20], &[5], &[3], &[2]]);
        let (threads, taken) = synchro_columns(&o);
        // RD holds readers and critical readers; MTX sums RD, WR, DG.
        assert_eq!(threads, [5, 0, 3, 1, 1]);
        assert_eq!(taken, [40, 0, 32, 5, 3]);
        let table = synchro_table(&o);
        assert!(table.contains("exclusive-only"), "{table}");
        assert!(table.contains("no downgrade_write"), "{table}");
        assert!(table.contains("critical readers"), "{table}");
    }

    #[test]
    fn locktorture_lines_group_writers_with_downgraders() {
        let o = outcome(true, true, [&[7, 9], &[4], &[1], &[8]]);
        let out = render(&o);
        assert!(
            out.contains("Writes:  Total: 5  Max/Min: 4/1 ???  Fail: 0"),
            "{out}"
        );
        assert!(
            out.contains("Reads :  Total: 24  Max/Min: 9/7   Fail: 0"),
            "{out}"
        );
        assert!(!out.contains("watchdog"), "{out}");
    }

    #[test]
    fn stuck_threads_are_named_by_role() {
        let mut o = outcome(true, true, [&[7], &[0, 3], &[], &[]]);
        o.threads[1].end = End::Stuck;
        let out = render(&o);
        assert!(
            out.contains(
                "watchdog: 1 of 3 threads still running at the watchdog, inside an acquire (1 writers)"
            ),
            "{out}"
        );
    }

    #[test]
    fn units() {
        assert_eq!(fmt_ns(0), "0ns");
        assert_eq!(fmt_ns(999), "999ns");
        assert_eq!(fmt_ns(12_345), "12.3us");
        assert_eq!(fmt_ns(4_560_000), "4.56ms");
        assert_eq!(fmt_ns(1_200_000_000), "1.20s");
    }
}
