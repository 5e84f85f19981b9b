//! `rmap-storm run`: one reclaim storm, the main job, on real threads or on
//! the simulator's virtual CPUs.

use super::duration;
use super::engine_args::EngineArgs;
use crate::engine::{self, RunConfig, RunEngine, RunRequest};
use crate::fileio::{write_atomic, write_json};
use crate::locks::{LockKind, trace};
use crate::model::Model;
use crate::report::{csv, run_text};
use crate::results::{PointRun, RunReport, SweepPoint};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Run a model's roles with the chosen lock on the rmap, on real threads or
/// on virtual CPUs (--engine sim).
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Bad input (model, lock, range, profile) exits 2 with one line; a run that livelocks still ends at 2x --duration and says so. With --engine sim, --duration is virtual time and the output is the same for the same seed."
)]
pub struct Args {
    /// The model file [default: models/aim7-fork-storm.toml]
    pub model: Option<PathBuf>,
    /// The lock under test: on every anon_vma root and i_mmap (or on the
    /// mmap_lock when the model's workload.lock_target = "mmap_lock").
    /// Kinds: tas, spinlock, qspinlock, rwlock, qrwlock, rwsem-fifo, rwsem-xadd,
    /// rwsem, mutex, percpu-rwsem [default: the cargo feature's kind, rwsem]
    #[arg(long, value_name = "KIND")]
    pub lock: Option<String>,
    /// The mmap_lock's kind when it is not the lock under test
    #[arg(long, value_name = "KIND", default_value = "rwsem")]
    pub mmap_lock: String,
    /// Threads of the model's scaled role (workload.scale, reclaim by default)
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// How long to run (500ms, 2s, 1m; virtual time with --engine sim)
    #[arg(long, default_value = "2s")]
    pub duration: String,
    /// Pin worker threads round-robin to these CPUs (0-3,6); with --engine
    /// sim, to these virtual CPUs (a pinned thread wakes only there)
    #[arg(long, value_name = "CPULIST")]
    pub pin: Option<String>,
    /// RNG seed [default: the model's world.seed]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override a model value, checked like the file (repeatable)
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
    /// Write the run's JSON here (its "schema" key says which; see README)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the run's CSV (one row per role) here
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write every context switch and wake-up here, as the kernel's
    /// sched:sched_switch and sched:sched_wakeup tracepoints print them in
    /// /sys/kernel/tracing/trace: simulated, in virtual time; natively (root
    /// and tracefs needed) the kernel's own sched_switch, sched_waking and
    /// sched_wakeup on the pinned CPUs, in CLOCK_MONOTONIC like
    /// --lock-trace. About 150 bytes an event, and a yield storm switches a
    /// million times a second
    #[arg(long, value_name = "FILE")]
    pub sched_trace: Option<PathBuf>,
    /// Write every contended lock acquisition's start and grant here, as
    /// the kernel's lock:contention_begin and lock:contention_end
    /// tracepoints print them, with the lock's class for its address (both
    /// engines: natively stamped with CLOCK_MONOTONIC, to merge with `perf
    /// record -k CLOCK_MONOTONIC`, and two clock reads a contended
    /// acquisition; simulated in virtual time, at no cost to the run)
    #[arg(long, value_name = "FILE")]
    pub lock_trace: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(args: Args) -> Result<()> {
    let model_path = args.model.clone().unwrap_or_else(Model::default_path);
    let lock = match &args.lock {
        Some(name) => parse_lock("--lock", name)?,
        None => LockKind::default_kind(),
    };
    let req = RunRequest {
        model_path: &model_path,
        overrides: &args.set,
        threads: args.threads,
        lock,
        mmap_lock: parse_lock("--mmap-lock", &args.mmap_lock)?,
        duration: duration::parse("--duration", &args.duration)?,
        pin: args.pin.as_deref(),
        seed: args.seed,
        engine: args.engine.run_engine(&[])?,
    };
    let cfg = RunConfig::resolve(&req)?;
    for out in [&args.json, &args.csv, &args.sched_trace, &args.lock_trace]
        .into_iter()
        .flatten()
    {
        check_writable(out)?;
    }
    if args.lock_trace.is_some() {
        trace::start();
    }
    let report = match (&args.sched_trace, &cfg.engine) {
        (None, _) => engine::run(&cfg)?,
        (Some(path), RunEngine::Sim(spec)) => {
            let (report, trace) = engine::sim::storm::run_traced(&cfg, spec)?;
            write_atomic(path, trace.as_bytes())?;
            report
        }
        (Some(path), RunEngine::Native { .. }) => {
            let (report, dropped) = engine::native::run_traced(&cfg, path)?;
            if dropped > 0 {
                eprintln!(
                    "rmap-storm: {}: {dropped} events dropped (the trace buffer was full); \
                     the file says so in its header",
                    path.display()
                );
            }
            report
        }
    };
    if let Some(path) = &args.lock_trace {
        let clock = match cfg.engine {
            RunEngine::Native { .. } => "CLOCK_MONOTONIC seconds",
            RunEngine::Sim(_) => "virtual seconds",
        };
        let about = format!(
            "rmap-storm {} run of {} with {}: contended acquisitions; times in {clock}",
            report.engine,
            cfg.model_path.display(),
            cfg.lock.name()
        );
        write_atomic(path, trace::finish().to_ftrace(&about).as_bytes())?;
    }
    print!("{}", run_text::render(&report));
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    if let Some(path) = &args.csv {
        write_atomic(
            path,
            &csv::to_bytes(&csv::rows(&[as_point(&cfg, &args.engine, report)]))?,
        )?;
    }
    Ok(())
}

fn parse_lock(flag: &str, name: &str) -> Result<LockKind> {
    LockKind::parse(name).map_err(|e| Error::usage(format!("{flag}: {e}")))
}

/// Refuse an output path whose folder does not exist or that is a folder,
/// before the run, so a long run is not lost to a typo.
pub(super) fn check_writable(path: &Path) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "{}: folder {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{}: is a folder (allowed: a file path)",
            path.display()
        )));
    }
    Ok(())
}

/// A single run as a one-point sweep, so its CSV has the sweep's columns.
fn as_point(cfg: &RunConfig, engine: &EngineArgs, report: RunReport) -> PointRun {
    let point = SweepPoint {
        index: 0,
        model: cfg.model_path.display().to_string(),
        lock: cfg.lock,
        x_key: "threads".into(),
        x: report.threads.to_string(),
        x_index: 0,
        repeat: 0,
        seed: cfg.seed,
        threads: Some(report.threads),
        duration_ms: cfg.duration.as_millis() as u64,
        overrides: cfg.overrides.clone(),
        engine: super::sweep::point_engine(engine, &cfg.engine),
    };
    PointRun { report, point }
}
