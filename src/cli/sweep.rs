//! `rmap-storm sweep MODEL --locks A,B --threads 1,2,4 --out DIR`: run every
//! (x, lock, repeat) point, keep each finished point in DIR at once, then draw
//! the plots.

use crate::engine::{self, RunConfig, RunEngine, RunRequest};
use crate::locks::LockKind;
use crate::report::plot;
use crate::results::{RunReport, Shard, SweepParams, SweepPoint, XAxis};
use crate::sweep::{self, Runner};
use crate::{Error, Result};
use std::path::Path;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
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
    /// Length of each run (500ms, 2s, 1m).
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
}

pub fn run(args: Args) -> Result<()> {
    let params = params(&args)?;
    let progress = sweep::progress::bar();
    let outcome = sweep::run(&params, &args.out, &NativeRunner, &progress);
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
    let (x, threads) = match (&args.vary, threads) {
        (None, threads) => (XAxis::Threads(threads.unwrap_or(vec![1, 2, 4, 8])), None),
        (Some(vary), threads) => (parse_vary(vary)?, single(threads)?),
    };
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
    };
    params.validate().map_err(Error::usage)?;
    Ok(params)
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

/// With --vary, --threads fixes one count for every point.
fn single(threads: Option<Vec<u32>>) -> Result<Option<u32>> {
    match threads.as_deref() {
        None => Ok(None),
        Some([one]) => Ok(Some(*one)),
        Some(_) => Err(Error::usage(
            "--threads: give one count with --vary (the --vary key is the x axis)",
        )),
    }
}

/// The engine behind `rmap-storm sweep`: each point is resolved exactly as
/// `run` resolves its arguments (so a bad model or override is a usage error
/// found before anything is written), then run on real threads. The mmap_lock
/// keeps its default kind (rwsem) unless the model studies it.
struct NativeRunner;

impl Runner for NativeRunner {
    fn check(&self, point: &SweepPoint) -> Result<()> {
        config(point).map(|_| ())
    }

    fn run(&self, point: &SweepPoint) -> Result<RunReport> {
        engine::run(&config(point)?)
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
        engine: RunEngine::Native {
            machine: crate::model::machine::load(
                &crate::model::machine::MachineProfile::default_path(),
            )?,
        },
    })
}
