//! `rmap-storm torture`: arguments in, a validated [`Config`] to the torture
//! engine, its report out. Every bad value is one line naming the option and
//! its allowed range (exit 2); a failed check exits 1.

use super::engine_args::EngineArgs;
use crate::locks::LockKind;
use crate::torture::{self, Config, Engine, Role};
use crate::{Error, Result};
use std::io::Write;
use std::time::Duration;

/// Stress one lock locktorture / synchro-test style, checking on every
/// acquisition that no writer shares the lock with anyone.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Lock kind: tas, spinlock, qspinlock, rwlock, qrwlock, rwsem-fifo,
    /// rwsem-xadd, rwsem, mutex or percpu-rwsem
    /// [default: the build's lock-* feature, rwsem unless changed]
    #[arg(long, value_name = "KIND")]
    pub lock: Option<String>,
    /// Reader threads (down_read)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub readers: i64,
    /// Writer threads (down_write)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub writers: i64,
    /// Downgrader threads (down_write, downgrade_write; plain write where the kind has no downgrade)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub downgraders: i64,
    /// Critical reader threads (down_read_critical)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub critical_readers: i64,
    /// How long to run: 500ms, 5s, 2m
    #[arg(long, default_value = "5s", allow_hyphen_values = true)]
    pub duration: String,
    /// Hold time per acquisition, microseconds to the nanosecond (0.2 is 200 ns;
    /// busy-wait, like udelay)
    #[arg(
        long,
        value_name = "US",
        default_value_t = 2.0,
        allow_negative_numbers = true
    )]
    pub load_us: f64,
    /// Pause after each release, microseconds to the nanosecond (busy-wait)
    #[arg(
        long,
        value_name = "US",
        default_value_t = 2.0,
        allow_negative_numbers = true
    )]
    pub interval_us: f64,
    /// Yield the CPU after each release (synchro-test's do_sched)
    #[arg(long)]
    pub sched: bool,
    /// Draw each hold and pause from an exponential distribution of mean
    /// --load-us / --interval-us (the Markov models' assumption)
    #[arg(long)]
    pub exponential: bool,
    /// Seed of the drawn times and of the simulator
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(args: Args) -> Result<()> {
    let cfg = config(&args)?;
    let outcome = torture::run(&cfg)?;
    let report = torture::print::render(&outcome);
    let mut out = std::io::stdout().lock();
    out.write_all(report.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::failed(format!("torture: writing the report: {e}")))?;
    if outcome.stuck() > 0 {
        // Threads stuck inside an acquire never return; end the process here so
        // nothing later can wait on them (report printed and flushed above).
        eprintln!(
            "rmap-storm: torture: {} threads never returned from an acquire",
            outcome.stuck()
        );
        std::process::exit(1);
    }
    if outcome.failed() {
        return Err(Error::failed(format!(
            "torture: {} exclusion failures, {} threads panicked",
            outcome.fails(),
            outcome.panicked()
        )));
    }
    Ok(())
}

/// Check every argument and build the run's config.
fn config(args: &Args) -> Result<Config> {
    let kind = match &args.lock {
        Some(name) => LockKind::parse(name).map_err(|e| Error::usage(format!("--lock: {e}")))?,
        None => LockKind::default_kind(),
    };
    let max = Config::MAX_THREADS as i64;
    let mut threads = [0usize; 4];
    for (role, key, n) in [
        (Role::Reader, "--readers", args.readers),
        (Role::Writer, "--writers", args.writers),
        (Role::Downgrader, "--downgraders", args.downgraders),
        (
            Role::CriticalReader,
            "--critical-readers",
            args.critical_readers,
        ),
    ] {
        threads[role as usize] = in_range(key, n, 0, max)? as usize;
    }
    let total: usize = threads.iter().sum();
    if !(1..=Config::MAX_THREADS).contains(&total) {
        return Err(Error::usage(format!(
            "--readers + --writers + --downgraders + --critical-readers: {total} threads is out of range (allowed 1..={max})"
        )));
    }
    let engine = match args.engine.sim()? {
        Some(spec) => Engine::Sim(Box::new(spec)),
        None => Engine::Native,
    };
    Ok(Config {
        kind,
        threads,
        duration: super::duration::parse("--duration", &args.duration)?,
        load: delay("--load-us", args.load_us)?,
        interval: delay("--interval-us", args.interval_us)?,
        sched: args.sched,
        exponential: args.exponential,
        seed: args.seed,
        engine,
    })
}

/// A delay in microseconds, to the nanosecond (0.2 is 200 ns).
fn delay(key: &str, us: f64) -> Result<Duration> {
    let max = Config::MAX_DELAY_US as f64;
    if us.is_finite() && (0.0..=max).contains(&us) {
        Ok(Duration::from_nanos((us * 1_000.0).round() as u64))
    } else {
        Err(Error::usage(format!(
            "{key}: {us} is out of range (allowed 0..={max})"
        )))
    }
}

fn in_range(key: &str, n: i64, lo: i64, hi: i64) -> Result<i64> {
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(Error::usage(format!(
            "{key}: {n} is out of range (allowed {lo}..={hi})"
        )))
    }
}
