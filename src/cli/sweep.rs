//! `rmap-storm sweep MODEL --locks A,B --threads 1,2,4 --out DIR`: run every
//! (x, lock, repeat) point, keep each finished point in DIR at once, then draw
//! the plots. `--engine sim --cpus 1,2,4` runs the points on virtual CPUs,
//! the CPUs the x axis.

use super::engine_args::{EngineArgs, EngineName, parse_cpus};
use crate::engine::sim::{MAX_CPUS, Preempt};
use crate::engine::{self, RunConfig, RunEngine, RunRequest};
use crate::locks::LockKind;
use crate::report::plot;
use crate::results::{EngineKind, RunReport, Shard, SweepEngine, SweepParams, SweepPoint, XAxis};
use crate::sweep::{self, Runner};
use crate::{Error, Result};
use clap::ValueEnum;
use std::path::Path;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(mut_arg("cpus", |a| a.value_name("N,N,...").help(
    "Virtual CPUs (sim only, each 1..=4096), comma-separated: more than one value is the \
     x axis, one fixes every point's [default: the profile's CPUs]"
)))]
pub struct Args {
    /// The model file (TOML).
    pub model: String,
    /// Lock kinds to compare, comma-separated [default: every kind].
    #[arg(long)]
    pub locks: Option<String>,
    /// Thread counts of the model's scaled role, comma-separated: the x axis.
    /// With --vary, at most one count [default: 1,2,4,8; with --vary, the model's].
    #[arg(long)]
    pub threads: Option<String>,
    /// Make a model value the x axis instead: SECTION.KEY=V1,V2,...
    #[arg(long, value_name = "SECTION.KEY=V1,V2,...")]
    pub vary: Option<String>,
    /// Runs per (x, lock) pair; compare marks a change only with 3 or more.
    #[arg(long, default_value = "1")]
    pub repeat: u32,
    /// Length of each run (500ms, 2s, 1m; virtual time with --engine sim).
    #[arg(long, default_value = "2s")]
    pub duration: String,
    /// Override a model value for every run, as in `run` (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub sets: Vec<String>,
    /// Run only slice I of N of the point list (round-robin; 1-based), for a
    /// batch job array; join the slices with `rmap-storm merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Seed of repeat 1; repeat r uses seed + r - 1.
    #[arg(long, default_value = "1")]
    pub seed: u64,
    /// Output folder; a folder of the same sweep is resumed.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(args: Args) -> Result<()> {
    let params = params(&args)?;
    let progress = sweep::progress::bar();
    let runner = EngineRunner::for_sweep(&params);
    let outcome = sweep::run(&params, &args.out, &runner, &progress);
    progress.finish_and_clear();
    let outcome = outcome?;
    let plots = plot::write_all(&outcome.results, &args.out, None)?;
    println!(
        "{} points run, {} resumed, into {}: results.csv, results.json, {} plots",
        outcome.ran,
        outcome.resumed,
        args.out.display(),
        plots.len()
    );
    Ok(())
}

/// The sweep the arguments ask for; every malformed value is a usage error.
pub fn params(args: &Args) -> Result<SweepParams> {
    let locks = match &args.locks {
        Some(text) => items(text)
            .map(|name| LockKind::parse(name).map_err(|e| Error::usage(format!("--locks: {e}"))))
            .collect::<Result<Vec<_>>>()?,
        None => LockKind::ALL.to_vec(),
    };
    let threads = match &args.threads {
        Some(text) => Some(items(text).map(thread_count).collect::<Result<Vec<_>>>()?),
        None => None,
    };
    let (mut engine, cpus) = sweep_engine(&args.engine)?;
    let (x, threads) = x_axis(args.vary.as_deref(), threads, cpus, &mut engine)?;
    let duration = super::duration::parse("--duration", &args.duration)?;
    let shard = match &args.shard {
        Some(text) => Some(
            text.parse::<Shard>()
                .map_err(|e| Error::usage(format!("--shard: {e}")))?,
        ),
        None => None,
    };
    let params = SweepParams {
        model: args.model.clone(),
        locks,
        x,
        threads,
        repeat: args.repeat,
        duration_ms: duration.as_millis() as u64,
        seed: args.seed,
        overrides: args.sets.clone(),
        shard,
        engine,
    };
    params.validate().map_err(Error::usage)?;
    Ok(params)
}

/// The x axis and the thread count every point shares: the CPUs when more
/// than one is given, else the --vary key, else threads. One CPU count fixes
/// every point's (`engine.cpus`).
fn x_axis(
    vary: Option<&str>,
    threads: Option<Vec<u32>>,
    cpus: Vec<u32>,
    engine: &mut SweepEngine,
) -> Result<(XAxis, Option<u32>)> {
    if cpus.len() > 1 {
        if vary.is_some() {
            return Err(Error::usage(
                "--vary: not with more than one --cpus value (both would be the x axis; give one --cpus value)",
            ));
        }
        let threads = single(threads, "several --cpus values (the CPUs are the x axis)")?;
        return Ok((XAxis::Cpus(cpus), threads));
    }
    engine.cpus = cpus.first().copied();
    match vary {
        None => Ok((XAxis::Threads(threads.unwrap_or(vec![1, 2, 4, 8])), None)),
        Some(vary) => {
            let threads = single(threads, "--vary (the --vary key is the x axis)")?;
            Ok((parse_vary(vary)?, threads))
        }
    }
}

/// The items of a comma-separated list; an empty or blank text is no item.
fn items(text: &str) -> impl Iterator<Item = &str> {
    text.split(',')
        .map(str::trim)
        .filter(move |_| !text.trim().is_empty())
}

fn thread_count(text: &str) -> Result<u32> {
    text.parse().map_err(|_| {
        Error::usage(format!(
            "--threads: '{text}' is not a thread count (allowed: 1 or more)"
        ))
    })
}

/// `SECTION.KEY=V1,V2,...`; the key and values are checked by `validate`.
fn parse_vary(text: &str) -> Result<XAxis> {
    let (key, values) = text
        .split_once('=')
        .ok_or_else(|| Error::usage(format!("--vary {text}: expected SECTION.KEY=V1,V2,...")))?;
    Ok(XAxis::Vary {
        key: key.trim().to_string(),
        values: items(values).map(String::from).collect(),
    })
}

/// When something else is the x axis (`axis` says what), --threads fixes one
/// count for every point.
fn single(threads: Option<Vec<u32>>, axis: &str) -> Result<Option<u32>> {
    match threads.as_deref() {
        None => Ok(None),
        Some([one]) => Ok(Some(*one)),
        Some(_) => Err(Error::usage(format!(
            "--threads: give one count with {axis}"
        ))),
    }
}

/// Where the points run, and the `--cpus` values (on the simulator, the
/// profile's CPUs when none are given; none natively). Checked as `run`
/// checks them, the profile loaded here once, so a simulator option on the
/// native engine or a bad profile is a usage error before anything is
/// written.
fn sweep_engine(args: &EngineArgs) -> Result<(SweepEngine, Vec<u32>)> {
    let one_cpu_count = EngineArgs {
        cpus: None,
        ..args.clone()
    };
    let engine = one_cpu_count.run_engine(&[])?;
    if let RunEngine::Native { .. } = engine {
        // Refuses --cpus, which the check above did not see.
        args.run_engine(&[])?;
    }
    let mut chosen = point_engine(args, &engine);
    let profile = chosen.cpus.take();
    let cpus: Vec<u32> = match &args.cpus {
        Some(text) => items(text).map(cpu_count).collect::<Result<_>>()?,
        None => profile.into_iter().collect(),
    };
    if chosen.is_sim() && cpus.is_empty() {
        return Err(Error::usage(format!(
            "--cpus: empty list (allowed: 1..={MAX_CPUS})"
        )));
    }
    Ok((chosen, cpus))
}

fn cpu_count(text: &str) -> Result<u32> {
    parse_cpus(text).map(|n| n as u32)
}

/// What a point records about `engine` (resolved from `args`): the profile
/// as given, and on the simulator its preemption model and CPUs.
pub(super) fn point_engine(args: &EngineArgs, engine: &RunEngine) -> SweepEngine {
    let machine = args.machine.as_ref().map(|p| p.display().to_string());
    match engine {
        RunEngine::Native { .. } => SweepEngine {
            machine,
            ..SweepEngine::default()
        },
        RunEngine::Sim(spec) => SweepEngine {
            kind: EngineKind::Sim,
            machine,
            preempt: Some(spec.preempt.name().to_string()),
            cpus: Some(spec.cpus as u32),
        },
    }
}

/// The engine behind `rmap-storm sweep`: each point is resolved exactly as
/// `run` resolves its arguments, engine flags included (so a bad model,
/// override or profile is a usage error found before anything is written),
/// then run on real threads or on virtual CPUs, as the point says. The
/// mmap_lock keeps its default kind (rwsem) unless the model studies it.
/// Simulated points may run side by side; native ones never do.
struct EngineRunner {
    parallel: bool,
}

impl EngineRunner {
    fn for_sweep(params: &SweepParams) -> EngineRunner {
        EngineRunner {
            parallel: params.engine.is_sim(),
        }
    }
}

impl Runner for EngineRunner {
    fn check(&self, point: &SweepPoint) -> Result<()> {
        config(point).map(|_| ())
    }

    fn run(&self, point: &SweepPoint) -> Result<RunReport> {
        engine::run(&config(point)?)
    }

    fn parallel(&self) -> Option<&(dyn Runner + Sync)> {
        self.parallel.then_some(self as &(dyn Runner + Sync))
    }
}

fn config(point: &SweepPoint) -> Result<RunConfig> {
    RunConfig::resolve(&RunRequest {
        model_path: Path::new(&point.model),
        overrides: &point.overrides,
        threads: point.threads,
        lock: point.lock,
        mmap_lock: LockKind::Rwsem,
        duration: point.duration(),
        pin: None,
        seed: Some(point.seed),
        engine: engine_args(&point.engine)?.run_engine(&[])?,
    })
}

/// The engine flags a point's engine stands for.
fn engine_args(engine: &SweepEngine) -> Result<EngineArgs> {
    let preempt = match &engine.preempt {
        Some(name) => Some(Preempt::from_str(name, false).map_err(|_| {
            let allowed: Vec<_> = Preempt::value_variants().iter().map(|p| p.name()).collect();
            Error::usage(format!(
                "--preempt: unknown model '{name}' (allowed: {})",
                allowed.join(", ")
            ))
        })?),
        None => None,
    };
    Ok(EngineArgs {
        engine: match engine.kind {
            EngineKind::Native => EngineName::Native,
            EngineKind::Sim => EngineName::Sim,
        },
        cpus: engine.cpus.map(|n| n.to_string()),
        preempt,
        machine: engine.machine.as_ref().map(PathBuf::from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parsed(flags: &[&str]) -> Result<SweepParams> {
        let argv = ["sweep", "models/synchro.toml", "--out", "unused"];
        let cli = Cli::try_parse_from(argv.iter().chain(flags)).expect("flags parse");
        params(&cli.args)
    }

    #[test]
    fn simulated_points_run_in_parallel_and_native_ones_never() {
        let sim = parsed(&["--engine", "sim", "--cpus", "2,4"]).unwrap();
        assert!(EngineRunner::for_sweep(&sim).parallel().is_some());
        let native = parsed(&["--threads", "1,2"]).unwrap();
        assert!(EngineRunner::for_sweep(&native).parallel().is_none());
    }

    #[test]
    fn one_cpus_value_fixes_every_point_and_none_takes_the_profiles() {
        let fixed = parsed(&["--engine", "sim", "--cpus", "8", "--threads", "1,2"]).unwrap();
        assert_eq!(fixed.x, XAxis::Threads(vec![1, 2]));
        assert_eq!(fixed.engine.cpus, Some(8));
        assert!(fixed.points().iter().all(|p| p.engine.cpus == Some(8)));
        let profile =
            crate::model::machine::load(&crate::model::machine::MachineProfile::default_path())
                .unwrap();
        let default = parsed(&["--engine", "sim", "--preempt", "full"]).unwrap();
        assert_eq!(
            default.engine.cpus,
            Some(profile.topology.cpus() as u32),
            "the default profile's CPUs"
        );
        assert_eq!(default.engine.preempt.as_deref(), Some("full"));
        let native = parsed(&[]).unwrap();
        assert_eq!(native.engine, SweepEngine::default());
    }

    #[test]
    fn a_point_engine_becomes_the_flags_it_came_from() {
        let sim = parsed(&["--engine", "sim", "--cpus", "3", "--preempt", "none"]).unwrap();
        let point = &sim.points()[0];
        match engine_args(&point.engine).unwrap().run_engine(&[]).unwrap() {
            RunEngine::Sim(spec) => assert_eq!((spec.cpus, spec.preempt), (3, Preempt::None)),
            other => panic!("a simulated point ran on {}", other.name()),
        }
    }
}
