//! `rmap-storm crosscheck [--machine PROFILE] [--recalibrate N
//! [--recalibrate-every row|repeat]] [--control] [--repeats 5]
//! [--duration 1s] [--locks a,b] [--models a,b] [--cpus 1,2]
//! [--readme README.md] [--json FILE]`: the simulator against this machine (issue 9's
//! acceptance table).
//!
//! Everything is checked before the first run: the profile (missing: run
//! `calibrate` first), the models, the CPU counts against this machine, the
//! lock names, and the README's markers. The table goes to stdout; with
//! `--readme` it also replaces the README's block between the markers, in
//! one atomic write once every run is done. A row whose calibration or run
//! fails is written as failed, with the reason under the table, the other
//! rows still run, and the command ends with exit status 1.

use super::duration;
use crate::crosscheck::{self, Every, Plan, Recalibrate};
use crate::engine::native::calibrate;
use crate::engine::sim::Preempt;
use crate::fileio::{replace_between, section, temp_path, write_atomic, write_json};
use crate::locks::LockKind;
use crate::model::{self, machine};
use crate::report::crosscheck as table;
use crate::report::units::fmt_rate;
use crate::results::crosscheck::CrossRow;
use crate::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

/// The profile a cross-check needs: this machine's, from `calibrate`.
const LOCAL_PROFILE: &str = "models/machines/local.toml";

/// Run the cross-check models natively and on the simulator with the same
/// seeds, and print the scaled role's median ops/s of both with the error
/// (and the other roles' errors beside it).
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Needs a profile of this machine: run `rmap-storm calibrate` first (it writes models/machines/local.toml), or give --recalibrate N to calibrate again before every row. Native runs measure the machine: run on an otherwise idle machine."
)]
pub struct Args {
    /// The simulated machine: a profile calibrated on this one; with
    /// --recalibrate, the base of every row's own profile [default:
    /// models/machines/local.toml; with --recalibrate,
    /// models/machines/default.toml]
    #[arg(long, value_name = "PROFILE")]
    pub machine: Option<PathBuf>,
    /// Calibrate this machine again just before each row's native runs (N
    /// trials a figure, as `calibrate --trials N --storm-cpus <the row's
    /// CPUs>`: some 3 s a trial) and run both sides of the row on that
    /// profile, so that the simulator models the machine the native runs
    /// met, not a snapshot from minutes before
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub recalibrate: Option<i64>,
    /// With --recalibrate: calibrate once a row, or before every native
    /// repeat, whose simulated twin then runs on that profile (a
    /// calibration a repeat: some 10 s more each at --recalibrate 3)
    /// [default: row]
    #[arg(long, value_enum, value_name = "WHEN")]
    pub recalibrate_every: Option<Every>,
    /// Runs per side and point (seeds seed..seed+repeats-1 on both sides)
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repeats: u32,
    /// Length of each run (wall time natively, virtual time simulated)
    #[arg(long, default_value = "1s")]
    pub duration: String,
    /// Lock kinds, comma-separated [default: every kind]
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub locks: Vec<String>,
    /// Models, comma-separated
    #[arg(
        long,
        value_name = "MODELS",
        value_delimiter = ',',
        default_value = "models/aim7-fork-storm.toml,models/synchro.toml"
    )]
    pub models: Vec<PathBuf>,
    /// CPU counts N, comma-separated: N threads of the scaled role pinned
    /// round-robin to CPUs 0..N-1, native and on N virtual CPUs
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "1,2"
    )]
    pub cpus: Vec<String>,
    /// The first repeat's seed [default: each model's world.seed]
    #[arg(long)]
    pub seed: Option<u64>,
    /// The simulator's preemption model. `user` by default: the native
    /// runs are user-space threads, preemptible anywhere, spinning or not
    #[arg(long, value_enum, default_value_t = Preempt::User)]
    pub preempt: Preempt,
    /// Run each row's native side a second time, after its simulated
    /// side (the same seeds, on the same profile), and show that second
    /// median's error against the first beside the simulator's: the
    /// machine against itself minutes later, the floor under any model's
    /// error (a third more runs)
    #[arg(long)]
    pub control: bool,
    /// Also write the table into this file, between the lines
    /// `<!-- crosscheck:begin -->` and `<!-- crosscheck:end -->`
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,
    /// Also write every repeat's figures (both engines, every role, each
    /// row's seeds and profiles) to this file as JSON, once every row is
    /// done, so a table can be read again or reckoned otherwise
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// With --recalibrate: write each row's profile into this folder as
    /// MODEL-NcpuS-KIND.toml (with --recalibrate-every repeat, each
    /// repeat's as MODEL-NcpuS-KIND-seedS.toml) as the row finishes, so
    /// that its simulated side can be run again (`run --engine sim
    /// --machine FILE`)
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let plan = plan(&args)?;
    if let Some(readme) = &args.readme {
        section(readme, table::BEGIN, table::END)?;
    }
    if let Some(json) = &args.json {
        super::run::check_writable(json)?;
    }
    let points = crosscheck::points(&plan)?;
    let bar = progress_bar();
    let check = crosscheck::run(&plan, &points, &bar, |row| {
        let (native, sim, error) = table::row_figures(row);
        let rate = |r: Option<f64>| r.map_or("-".into(), fmt_rate);
        let interval = table::row_interval(row).map_or(String::new(), |(lo, hi)| {
            format!(", 95% {lo:+.0}..{hi:+.0}%")
        });
        let error = error.map_or("-".into(), |e| format!("{e:+.0}%{interval}"));
        let calibrated = table::calibrated_figures(&row.calibrated).map_or(String::new(), |f| {
            let [visit, walk, touch, wake, noise] = f;
            let median = if row.paired() { " (medians)" } else { "" };
            format!("; calibrated{median}: visit {visit}, walk start {walk}, touch {touch}, idle wake {wake}, interrupts every {noise}")
        });
        if let Some(dir) = &args.profiles {
            write_row_profiles(dir, row, &plan)?;
        }
        let again = match (plan.control, table::control_error(row)) {
            (false, _) => String::new(),
            (true, e) => format!(
                "; native again {} ({})",
                rate(table::median(&row.native_again_ops_per_s)),
                e.map_or("-".into(), |e| format!("{e:+.0}%"))
            ),
        };
        let figures = match &row.failed {
            Some(why) => format!("failed: {why}"),
            None => format!(
                "native {} sim {} ({error}){again}{calibrated}",
                rate(native),
                rate(sim)
            ),
        };
        bar.suspend(|| {
            eprintln!(
                "crosscheck: {} {} {} CPU(s) {}: {figures}",
                row.model,
                row.role,
                row.cpus,
                row.lock.name(),
            )
        });
        Ok(())
    })?;
    bar.finish_and_clear();
    let host = format!(
        "{} ({} CPUs online)",
        crate::engine::native::calibrate::cpu_model(),
        crate::engine::cpus::online_cpus()
    );
    let text = table::render(&check, &command_line(), &host);
    print!("{text}");
    if let Some(readme) = &args.readme {
        replace_between(readme, table::BEGIN, table::END, &text)?;
    }
    if let Some(json) = &args.json {
        write_json(json, &check)?;
    }
    match table::failed_rows(&check) {
        0 => Ok(()),
        n => Err(Error::failed(format!(
            "crosscheck: {n} of {} rows failed (listed under the table, which was written with them)",
            check.rows.len()
        ))),
    }
}

/// The arguments checked and built into a plan.
fn plan(args: &Args) -> Result<Plan> {
    if args.recalibrate_every.is_some() && args.recalibrate.is_none() {
        return Err(Error::usage(
            "--recalibrate-every: needs --recalibrate N (without it no row or repeat is calibrated)",
        ));
    }
    let every = args.recalibrate_every.unwrap_or(Every::Row);
    let recalibrate = args
        .recalibrate
        .map(|n| recalibrate(n, every))
        .transpose()?;
    if let Some(dir) = &args.profiles {
        if recalibrate.is_none() {
            return Err(Error::usage(
                "--profiles: needs --recalibrate N (without it no row has a profile of its own)",
            ));
        }
        check_folder(dir)?;
    }
    let machine_file = args.machine.clone().unwrap_or_else(|| {
        PathBuf::from(match recalibrate {
            Some(_) => super::calibrate::BASE,
            None => LOCAL_PROFILE,
        })
    });
    if !machine_file.exists() {
        return Err(Error::usage(format!(
            "--machine {}: no such profile (run `rmap-storm calibrate --out {}` on this machine first, or cross-check with --recalibrate)",
            machine_file.display(),
            machine_file.display()
        )));
    }
    let machine = machine::load(&machine_file)?;
    let locks = if args.locks.is_empty() {
        LockKind::ALL.to_vec()
    } else {
        args.locks
            .iter()
            .map(|name| LockKind::parse(name).map_err(|e| Error::usage(format!("--locks: {e}"))))
            .collect::<Result<_>>()?
    };
    let cpus = args
        .cpus
        .iter()
        .map(|c| super::engine_args::parse_cpus(c))
        .collect::<Result<Vec<usize>>>()?;
    Ok(Plan {
        models: args.models.clone(),
        cpus,
        locks,
        repeats: args.repeats,
        duration: duration::parse("--duration", &args.duration)?,
        seed: args.seed,
        machine_file,
        machine,
        preempt: args.preempt,
        recalibrate,
        control: args.control,
    })
}

/// Fail now, not after the first row's minute, if `dir` cannot take the
/// profiles: it must be an existing folder that takes a new file (probed
/// with the temp name the atomic writes use, removed at once).
fn check_folder(dir: &Path) -> Result<()> {
    let bad = |why: String| {
        Error::usage(format!(
            "--profiles {}: {why} (allowed: an existing, writable folder)",
            dir.display()
        ))
    };
    if !dir.is_dir() {
        return Err(bad("is not a folder".into()));
    }
    let probe = temp_path(&dir.join("probe.toml"));
    std::fs::File::create(&probe).map_err(|e| bad(format!("cannot be written: {e}")))?;
    std::fs::remove_file(&probe).map_err(|e| bad(format!("cannot be written: {e}")))
}

/// A row's profiles as `calibrate` writes them, each whole or not at all,
/// into `dir`: `MODEL-NcpuS-KIND.toml` for the row's one profile, or
/// `MODEL-NcpuS-KIND-seedS.toml` for each repeat's.
fn write_row_profiles(dir: &Path, row: &CrossRow, plan: &Plan) -> Result<()> {
    let name = format!(
        "{}-{}cpu{}-{}",
        row.model,
        row.cpus,
        if row.cpus == 1 { "" } else { "s" },
        row.lock.name()
    );
    for (c, seed) in row.calibrated.iter().zip(&row.seeds) {
        let (file, runs) = match row.paired() {
            true => (
                format!("{name}-seed{seed}.toml"),
                format!("run (seed {seed})"),
            ),
            false => (format!("{name}.toml"), "runs".to_string()),
        };
        let header = format!(
            "Written by `rmap-storm crosscheck --recalibrate {}` on {}, just before the native {runs}\n\
             of its row: {}, {} CPU{}, {}. Keys marked \"copied\" come from {}\n\
             unchanged; the others were measured here.",
            plan.recalibrate.as_ref().map_or(0, |r| r.plan.trials),
            calibrate::cpu_model(),
            row.model,
            row.cpus,
            if row.cpus == 1 { "" } else { "s" },
            row.lock.name(),
            plan.machine_file.display()
        );
        let text = c
            .machine
            .render(&header, |key| c.notes.get(key).cloned().unwrap_or_default());
        write_atomic(&dir.join(file), text.as_bytes())?;
    }
    Ok(())
}

/// `--recalibrate N`: N trials a figure, in calibrate's model.
fn recalibrate(trials: i64, every: Every) -> Result<Recalibrate> {
    let max = super::calibrate::MAX_TRIALS;
    if !(1..=max).contains(&trials) {
        return Err(Error::usage(format!(
            "--recalibrate: {trials} is out of range (allowed: 1..={max} trials a figure)"
        )));
    }
    Ok(Recalibrate {
        plan: calibrate::Plan {
            trials: trials as usize,
            quick: false,
            storm_cpus: None,
        },
        model: model::load(Path::new(super::calibrate::MODEL), &[])?,
        every,
    })
}

/// One tick per run, on stderr; indicatif hides the bar when stderr is not
/// a terminal (the per-row lines still print).
fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} runs, eta {eta} {msg}",
    )
    .expect("the template is a constant and valid")
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// The command as typed, for the table's header: the program's file name
/// and its arguments.
fn command_line() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "rmap-storm".into());
    std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}
