//! `rmap-storm calibrate [--out FILE] [--trials N] [--quick] [--model M]
//! [--set K=V]... [--base PROFILE] [--storm-cpus N]`: measure this machine
//! and write a machine profile for the simulator.
//!
//! The measurements are in [`crate::engine::native::calibrate`]; keys it does
//! not measure are copied from `--base` with a comment saying so. Everything
//! that can be checked is checked before the first measurement, so bad input
//! (an unwritable `--out`, a bad base profile or model) is one line and exit 2
//! with nothing written; the profile is then written whole or not at all.

use crate::engine::native::calibrate::{self, Calibration, Figure, Plan, cpu_list};
use crate::model::{self, machine};
use crate::sweep::store::{temp_path, write_atomic};
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Most trials per figure: past this the noise of a shared machine, not the
/// count, limits the median.
pub const MAX_TRIALS: i64 = 1000;

/// The model calibrate times the world's costs in, unless told otherwise.
pub const MODEL: &str = "models/aim7-fork-storm.toml";

/// The profile calibrate copies unmeasured keys from, unless told otherwise.
pub const BASE: &str = "models/machines/default.toml";

/// Measure this machine (atomics, cache-line ping-pong, futex wake and
/// switch, the native world's walks) and write a machine profile.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write the profile (whole or not at all).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "models/machines/local.toml"
    )]
    pub out: PathBuf,
    /// Trials per figure; each figure is their median.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 7,
        allow_negative_numbers = true
    )]
    pub trials: i64,
    /// A twentieth of the work per trial, but for the storm, which keeps its
    /// second (a few seconds a trial instead of tens of seconds).
    #[arg(long)]
    pub quick: bool,
    /// The model whose native world and storm the world's costs (a vma
    /// walked, a page unmapped, a fork) are measured in.
    #[arg(long, value_name = "MODEL", default_value = MODEL)]
    pub model: PathBuf,
    /// Override a model key, e.g. --set world.tasks=1001 (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
    /// The profile every key calibrate does not measure is copied from.
    #[arg(long, value_name = "PROFILE", default_value = BASE)]
    pub base: PathBuf,
    /// Run the model's storm (where the vma visit and the touch are timed)
    /// on the first N CPUs this process may use, as `run --pin 0-(N-1)`
    /// does; by default on all of them. A profile for runs on one CPU is
    /// truer measured on one: there every thread shares one core's caches.
    #[arg(long, value_name = "N")]
    pub storm_cpus: Option<usize>,
}

pub fn run(args: Args) -> Result<()> {
    if !(1..=MAX_TRIALS).contains(&args.trials) {
        return Err(Error::usage(format!(
            "--trials: {} is out of range (allowed: 1..={MAX_TRIALS})",
            args.trials
        )));
    }
    let base = machine::load(&args.base)?;
    let model = model::load(&args.model, &args.set)?;
    check_writable(&args.out)?;
    let plan = Plan {
        trials: args.trials as usize,
        quick: args.quick,
        storm_cpus: args.storm_cpus,
    };
    let cal = calibrate::measure(&plan, &model, &base)?;
    let base_name = args.base.display().to_string();
    let (profile, notes) = cal.profile(&base, &base_name);
    let header = format!(
        "Written by `rmap-storm calibrate`{} on {}, {} CPUs ({}).\n\
         Topology: this machine's online CPUs as one die. Keys marked \"copied\"\n\
         come from {base_name} unchanged; the others were measured here.",
        if args.quick { " --quick" } else { "" },
        calibrate::cpu_model(),
        cal.cpus.len(),
        cpu_list(&cal.cpus),
    );
    let text = profile.render(&header, |key| notes.get(key).cloned().unwrap_or_default());
    write_atomic(&args.out, text.as_bytes())?;
    let mut out = std::io::stdout().lock();
    out.write_all(table(&cal, &args.out).as_bytes())
        .map_err(|e| Error::failed(format!("stdout: {e}")))
}

/// Fail now, before minutes of measuring, if `out` cannot be written: its
/// folder must exist and take a new file, and `out` must not be a folder.
/// The probe file is the temp name the atomic write uses, removed at once.
fn check_writable(out: &Path) -> Result<()> {
    let bad = |why: String| {
        Error::usage(format!(
            "--out {}: {why} (allowed: a file path in an existing, writable folder)",
            out.display()
        ))
    };
    if out.is_dir() {
        return Err(bad("is a folder".into()));
    }
    let probe = temp_path(out);
    std::fs::File::create(&probe).map_err(|e| bad(format!("cannot be written: {e}")))?;
    std::fs::remove_file(&probe).map_err(|e| bad(format!("cannot be written: {e}")))
}

/// Every figure as `name  median unit  (min..max over N trials)  what`, then
/// where the profile went.
fn table(cal: &Calibration, out: &Path) -> String {
    let two = |f: &Option<Figure>| {
        f.clone()
            .ok_or("needs 2 CPUs: copied from the base profile")
    };
    let rows: Vec<(&str, std::result::Result<Figure, &str>, String)> = vec![
        (
            "atomic_rmw",
            Ok(cal.atomic.clone()),
            "uncontended LOCK XADD -> cache.atomic_ns".into(),
        ),
        (
            "pause",
            Ok(cal.pause.clone()),
            "one spin_loop() (PAUSE) -> cache.pause_ns".into(),
        ),
        (
            "syscall",
            Ok(cal.syscall.clone()),
            "getppid(2) -> work.syscall_ns".into(),
        ),
        (
            "clock",
            Ok(cal.clock.clone()),
            "one clock read (Instant::now) -> work.clock_ns".into(),
        ),
        (
            "busy_wait",
            Ok(cal.busy_wait_extra.clone()),
            "udelay(2 us), a spin on the clock, beyond its 2 us -> work.busy_wait_extra_ns".into(),
        ),
        (
            "sched_yield",
            Ok(cal.sched_yield.clone()),
            "sched_yield(2) with nothing else to run on its CPU -> sched.yield_ns".into(),
        ),
        (
            "park_cold",
            Ok(cal.park_cold.clone()),
            "a park or unpark right after a switch, beyond a warm one -> sched.park_cold_ns".into(),
        ),
        (
            "line_pingpong",
            two(&cal.pingpong),
            "half a CAS round trip between 2 CPUs -> cache.die_ns".into(),
        ),
        (
            "handoff_1cpu",
            Ok(cal.handoff_one_cpu.clone()),
            "futex wake + wait + switch on one CPU -> sched.ctx_switch_ns, sched.wakeup_ns".into(),
        ),
        (
            "handoff_spread",
            Ok(cal.jitter.clone()),
            "single handoffs on one CPU, IQR / ln 3 -> sched.jitter_ns (/ sqrt 2)".into(),
        ),
        (
            "handoff_2cpu",
            two(&cal.handoff_two_cpus),
            "futex wake of a thread on an idle CPU -> sched.wakeup_idle_ns".into(),
        ),
        (
            "wake_remote",
            two(&cal.wake_remote),
            "the waker's own time in that wake (ttwu + IPI) -> sched.wakeup_ipi_ns".into(),
        ),
        (
            "handoff_busy",
            two(&cal.handoff_busy),
            "median futex wake of a thread whose CPU runs a spinner it preempts -> sched.resched_ipi_ns".into(),
        ),
        (
            "noise_interval",
            Ok(cal.noise_interval.clone()),
            "uninterrupted time per gap over 2 us of a clock-reading loop -> sched.noise_interval_ns".into(),
        ),
        (
            "noise",
            Ok(cal.noise.clone()),
            "mean length of those gaps (interrupts, the host) -> sched.noise_ns".into(),
        ),
        (
            "walk_per_vma",
            Ok(cal.walk.clone()),
            format!(
                "CPU time per vma of the {} page_referenced walks of >= {} vmas in the model's native storm -> work.vma_visit_ns",
                cal.storm_walks,
                cal.storm_min_vmas
            ),
        ),
        (
            "walk_start",
            cal.walk_start.clone().ok_or("no walk of one vma: copied from the base profile"),
            format!(
                "mean CPU time of the {} page_referenced walks of one vma in that storm, less two CPU-clock reads ({:.1} ns), the visit and the lock's two atomics -> work.walk_ns",
                cal.one_vma_walks,
                cal.cpu_clock.median()
            ),
        ),
        (
            "lru_per_page",
            Ok(cal.lru.clone()),
            "native isolate + putback of 32-page batches, per page moved -> work.lru_page_ns".into(),
        ),
        (
            "fork_exit",
            Ok(cal.fork.clone()),
            format!(
                "native fork + exit of a task in a loop ({} vmas, {} AVCs, {} PTEs){}",
                cal.fork_work.vmas,
                cal.fork_work.avcs,
                cal.fork_work.ptes,
                if cal.storm_fork.is_some() {
                    ""
                } else {
                    " -> work.vma_ns, avc_ns, pte_copy_ns"
                }
            ),
        ),
        (
            "storm_fork",
            cal.storm_fork.clone().ok_or("the storm forked none: the loop's figure instead"),
            format!(
                "median CPU time of the {} forks + exits in the walks' native storm, less two CPU-clock reads -> work.vma_ns, avc_ns, pte_copy_ns",
                cal.storm_forks
            ),
        ),
        (
            "unmap_per_vma",
            Ok(cal.unmap.clone()),
            format!(
                "native reclaim (try_to_unmap) {}, {} vmas per page -> work.unmap_pte_ns",
                cal.after_eviction(),
                cal.walk_vmas
            ),
        ),
        (
            "touch",
            Ok(cal.touch.clone()),
            "the touch role's mean touch of a mapped page in the walks' native storm, less a clock read -> work.touch_ns".into(),
        ),
        (
            "grace_period",
            Ok(cal.grace_period.clone()),
            "synchronize_rcu as membarrier(MEMBARRIER_CMD_GLOBAL) -> work.rcu_gp_ns".into(),
        ),
    ];
    let mut text = format!(
        "calibrate: {}, {} CPUs ({}), medians of {} trials\n",
        calibrate::cpu_model(),
        cal.cpus.len(),
        cpu_list(&cal.cpus),
        cal.atomic.trials_ns.len()
    );
    for (name, fig, what) in rows {
        let line = match fig {
            Ok(f) => format!(
                "{name:<14} {:>10.1} ns  ({:.1}..{:.1} ns)  {what}",
                f.median(),
                f.min(),
                f.max()
            ),
            Err(why) => format!("{name:<14} {:>10} ns  ({why})  {what}", "-"),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&format!("wrote {}\n", out.display()));
    text
}
