//! The native-vs-simulator cross-check (issue 9): the same model, lock kind,
//! thread count and seeds on this machine's CPUs and on as many virtual CPUs
//! of a profile calibrated on it, so the simulator's error against the
//! machine it models can be read off one table.
//!
//! For every model, CPU count N and lock kind: `repeats` native runs pinned
//! to CPUs 0..N-1 with N threads of the model's scaled role, one after
//! another (a native run measures the machine: two at once would measure
//! each other), then as many simulated runs on N virtual CPUs, pinned the
//! same way, with the same seeds, in parallel (a simulated run depends only
//! on its inputs). Each run gives its scaled role's ops/s and every other
//! role's, in a [`CrossRow`] per point; the report above this layer takes
//! the medians and the errors.
//!
//! A profile is a snapshot of a machine that drifts: on a 2-vCPU VM,
//! calibrations a minute apart put a vma's visit at 284-468 ns and the
//! interruptions 0.23-1.3 ms apart, and a table's simulated column moved
//! with the profile while its native one did not. With [`Recalibrate`],
//! every row is calibrated again just before its native runs, and both of
//! its sides run on that profile: the machine the simulator models is the
//! one the native runs met, within seconds. Its storm (where the vma visit
//! and the touch are timed) runs on the row's N CPUs, as the row does: on
//! one CPU a visit cost 243-277 ns where on two it cost 162-214 ns, in
//! three pairs of calibrations taken in turn (2-vCPU EPYC VM, 2026-12-06).
//! With [`Every::Repeat`] the calibration comes before each native repeat
//! instead, and that repeat's simulated twin runs on it: a row's repeats
//! span up to a minute, over which the machine moves too.

use crate::engine::sim::{Preempt, SimSpec};
use crate::engine::{self, RunConfig, RunEngine, RunRequest, calibrate};
use crate::locks::LockKind;
use crate::model::Model;
use crate::model::machine::MachineProfile;
use crate::results::RunReport;
use crate::results::crosscheck::{Calibrated, CrossCheck, CrossRow, RoleRates};
use crate::{Error, Result};
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What to cross-check.
#[derive(Clone, Debug)]
pub struct Plan {
    pub models: Vec<PathBuf>,
    /// CPU counts N: `--pin 0..N-1 --threads N`, simulated on `--cpus N`.
    pub cpus: Vec<usize>,
    pub locks: Vec<LockKind>,
    /// Runs per side and point (seeds `seed..seed + repeats`).
    pub repeats: u32,
    pub duration: Duration,
    /// The first repeat's seed; None: each model's `world.seed`.
    pub seed: Option<u64>,
    /// The profile the simulator runs and both sides charge kernel work
    /// from; with `recalibrate`, the base of every row's own profile.
    pub machine_file: PathBuf,
    pub machine: MachineProfile,
    pub preempt: Preempt,
    pub recalibrate: Option<Recalibrate>,
    /// Run the native side a second time after the simulated one (the
    /// control): how far the machine's own median moves between two
    /// sittings minutes apart, the floor under any model's error.
    pub control: bool,
}

/// Calibrate this machine again before each row's native runs, or before
/// each of its repeats, as `rmap-storm calibrate --trials N --model M
/// --base <the plan's machine>` would, and run both sides on that profile.
#[derive(Clone, Debug)]
pub struct Recalibrate {
    pub plan: calibrate::Plan,
    /// The model whose native world and storm time the world's costs.
    pub model: Model,
    pub every: Every,
}

/// How often a recalibrating check calibrates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Every {
    /// Once a row, before its native runs: the row's repeats all run on
    /// one profile, the last of them up to a minute after it was taken.
    Row,
    /// Before each native repeat, whose simulated repeat then runs on that
    /// profile: each pair of runs models the machine of its own moment.
    /// On the 2-vCPU EPYC VM the native rate followed the vma visit from
    /// one calibration to the next (six alternating calibrations and 6 s
    /// runs within two minutes: visit 127-317 ns, native 107-222k/s, the
    /// simulated error on each run's own profile +13..+42%; 2026-12-07).
    Repeat,
}

impl Recalibrate {
    /// This machine's profile now, on the plan's machine as its base, its
    /// storm run on the `cpus` a row pins.
    fn profile(&self, plan: &Plan, cpus: usize) -> Result<Calibrated> {
        let at = calibrate::Plan {
            storm_cpus: Some(cpus),
            ..self.plan
        };
        let cal = calibrate::measure(&at, &self.model, &plan.machine)?;
        let base = plan.machine_file.display().to_string();
        let (machine, notes) = cal.profile(&plan.machine, &base);
        Ok(Calibrated { machine, notes })
    }
}

/// One (model, CPUs, kind): its two resolved configs (seed of the first
/// repeat).
#[derive(Clone, Debug)]
pub struct Point {
    pub native: RunConfig,
    pub sim: RunConfig,
}

impl Point {
    /// `aim7-fork-storm 2 CPUs rwsem`.
    pub fn label(&self) -> String {
        format!(
            "{} {} CPU{} {}",
            model_name(&self.native),
            self.cpus(),
            if self.cpus() == 1 { "" } else { "s" },
            self.native.lock.name()
        )
    }

    fn cpus(&self) -> u32 {
        self.native.model.workload.scaled_threads()
    }

    /// The scaled role, whose ops/s the row compares.
    fn role(&self) -> &'static str {
        self.native.model.workload.scale.name()
    }

    /// The seed of every repeat, the same on both sides.
    fn seeds(&self, plan: &Plan) -> Vec<u64> {
        (0..u64::from(plan.repeats))
            .map(|r| self.native.seed + r)
            .collect()
    }

    /// The point's row with no figures yet.
    fn row(&self, plan: &Plan) -> CrossRow {
        CrossRow {
            model: model_name(&self.native),
            role: self.role().to_string(),
            cpus: self.cpus(),
            lock: self.native.lock,
            seeds: self.seeds(plan),
            native_ops_per_s: Vec::new(),
            sim_ops_per_s: Vec::new(),
            native_again_ops_per_s: Vec::new(),
            others: BTreeMap::new(),
            calibrated: Vec::new(),
            failed: None,
        }
    }

    /// The point's row when it could not be measured: no figures, and why.
    fn failed_row(&self, plan: &Plan, error: &Error) -> CrossRow {
        CrossRow {
            failed: Some(error.to_string()),
            ..self.row(plan)
        }
    }

    /// The same point with both sides on `machine`.
    fn on(&self, machine: &MachineProfile) -> Point {
        let mut point = self.clone();
        point.native.engine = RunEngine::Native {
            machine: machine.clone(),
        };
        if let RunEngine::Sim(spec) = &mut point.sim.engine {
            spec.machine = machine.clone();
        }
        point
    }
}

fn model_name(cfg: &RunConfig) -> String {
    cfg.model_path.file_stem().map_or_else(
        || cfg.model_path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Resolve every point of `plan`, so bad input (a model, a CPU count this
/// machine lacks, no repeats) fails before the first run.
pub fn points(plan: &Plan) -> Result<Vec<Point>> {
    if plan.repeats == 0 {
        return Err(Error::usage("--repeats: 0 is out of range (allowed: 1..)"));
    }
    let mut points = Vec::new();
    for model_path in &plan.models {
        for &n in &plan.cpus {
            for &lock in &plan.locks {
                let pin = format!("0-{}", n - 1);
                let request = RunRequest {
                    model_path,
                    overrides: &[],
                    threads: Some(n as u32),
                    lock,
                    mmap_lock: LockKind::Rwsem,
                    duration: plan.duration,
                    pin: Some(&pin),
                    seed: plan.seed,
                    engine: RunEngine::Sim(SimSpec {
                        cpus: n,
                        preempt: plan.preempt,
                        machine: plan.machine.clone(),
                    }),
                };
                // The simulated side first: its errors are the model's own.
                let sim = RunConfig::resolve(&request)?;
                let native = RunConfig::resolve(&RunRequest {
                    engine: RunEngine::Native {
                        machine: plan.machine.clone(),
                    },
                    ..request
                })
                .map_err(|e| {
                    Error::usage(format!("--cpus {n}: native runs pin CPUs {pin}: {e}"))
                })?;
                points.push(Point { native, sim });
            }
        }
    }
    Ok(points)
}

/// Run every point `repeats` times a side; `on_row` sees each finished row
/// (for progress lines and row profiles: its error stops the check),
/// `progress` ticks once per run.
///
/// A row that cannot be measured (its calibration or one of its runs
/// fails) becomes a row with no figures and the error's text, and the
/// check goes on: a table takes half an hour, and one row's failure late
/// in it must not lose the rows before it.
pub fn run(
    plan: &Plan,
    points: &[Point],
    progress: &ProgressBar,
    on_row: impl FnMut(&CrossRow) -> Result<()>,
) -> Result<CrossCheck> {
    let sides = if plan.control { 3 } else { 2 };
    progress.set_length(points.len() as u64 * sides * u64::from(plan.repeats));
    rows_of(plan, points, |point| measure(plan, point, progress), on_row)
}

/// The check's rows, one per point as `measure` makes it, or a failed row
/// where it fails.
fn rows_of(
    plan: &Plan,
    points: &[Point],
    mut measure: impl FnMut(&Point) -> Result<CrossRow>,
    mut on_row: impl FnMut(&CrossRow) -> Result<()>,
) -> Result<CrossCheck> {
    let mut rows = Vec::with_capacity(points.len());
    for point in points {
        let row = measure(point).unwrap_or_else(|e| point.failed_row(plan, &e));
        on_row(&row)?;
        rows.push(row);
    }
    Ok(CrossCheck {
        machine_file: plan.machine_file.display().to_string(),
        machine_name: plan.machine.name.clone(),
        duration_s: plan.duration.as_secs_f64(),
        preempt: plan.preempt.name().to_string(),
        recalibrated: plan.recalibrate.as_ref().map(|r| r.plan.trials),
        per_repeat: plan
            .recalibrate
            .as_ref()
            .is_some_and(|r| r.every == Every::Repeat),
        control: plan.control,
        rows,
    })
}

/// One point's row, calibrated as the plan asks, with the engines' runs.
fn measure(plan: &Plan, point: &Point, progress: &ProgressBar) -> Result<CrossRow> {
    let mut calibrate = |cpus| {
        let r = plan
            .recalibrate
            .as_ref()
            .expect("asked only when recalibrating");
        progress.set_message(format!("{} calibrate", point.label()));
        r.profile(plan, cpus)
    };
    measure_with(plan, point, progress, &mut calibrate, run_once)
}

/// One point's row: its native runs one after another, each after its own
/// calibration if the plan calibrates every repeat (the row's first one
/// after the row's calibration if it calibrates every row), then its
/// simulated runs in parallel, each on the profile its native twin ran on,
/// then, for a control, the native runs again in the same order.
fn measure_with(
    plan: &Plan,
    point: &Point,
    progress: &ProgressBar,
    calibrate: &mut dyn FnMut(usize) -> Result<Calibrated>,
    run: impl Fn(&RunConfig, u64) -> Result<RunReport> + Sync,
) -> Result<CrossRow> {
    let every = plan.recalibrate.as_ref().map(|r| r.every);
    let cpus = point.cpus() as usize;
    let mut calibrated = Vec::new();
    // The point on a fresh calibration, kept in `calibrated`.
    let mut recalibrated = |calibrated: &mut Vec<Calibrated>| -> Result<Point> {
        let c = calibrate(cpus)?;
        let on = point.on(&c.machine);
        calibrated.push(c);
        Ok(on)
    };
    let on_row = match every {
        Some(Every::Row) => recalibrated(&mut calibrated)?,
        _ => point.clone(),
    };
    let seeds = point.seeds(plan);
    let role = point.role();
    let mut native = Vec::with_capacity(seeds.len());
    let mut pairs = Vec::with_capacity(seeds.len());
    for &seed in &seeds {
        let pair = match every {
            Some(Every::Repeat) => recalibrated(&mut calibrated)?,
            _ => on_row.clone(),
        };
        progress.set_message(format!("{} native", point.label()));
        native.push(role_rates(&run(&pair.native, seed)?, role)?);
        progress.inc(1);
        pairs.push((pair, seed));
    }
    progress.set_message(format!("{} sim", point.label()));
    let sim = pairs
        .par_iter()
        .map(|(pair, seed)| {
            let rates = role_rates(&run(&pair.sim, *seed)?, role);
            progress.inc(1);
            rates
        })
        .collect::<Result<Vec<_>>>()?;
    let mut native_again = Vec::new();
    if plan.control {
        progress.set_message(format!("{} native again", point.label()));
        for (pair, seed) in &pairs {
            native_again.push(role_rates(&run(&pair.native, *seed)?, role)?.0);
            progress.inc(1);
        }
    }
    let mut scaled = RoleRates::default();
    let mut others: BTreeMap<String, RoleRates> = BTreeMap::new();
    let sides: [(_, Side); 2] = [
        (native, |r| &mut r.native_ops_per_s),
        (sim, |r| &mut r.sim_ops_per_s),
    ];
    for (runs, side) in sides {
        for (ops, rest) in runs {
            side(&mut scaled).push(ops);
            for (name, ops) in rest {
                side(others.entry(name).or_default()).push(ops);
            }
        }
    }
    Ok(CrossRow {
        native_ops_per_s: scaled.native_ops_per_s,
        sim_ops_per_s: scaled.sim_ops_per_s,
        native_again_ops_per_s: native_again,
        others,
        calibrated,
        ..point.row(plan)
    })
}

/// One engine's list of a role's figures.
type Side = fn(&mut RoleRates) -> &mut Vec<f64>;

fn run_once(cfg: &RunConfig, seed: u64) -> Result<RunReport> {
    engine::run(&RunConfig {
        seed,
        ..cfg.clone()
    })
}

/// The scaled role's ops/s, and every other role's by name; a report
/// without the scaled role is the engine's failure.
fn role_rates(report: &RunReport, role: &str) -> Result<(f64, BTreeMap<String, f64>)> {
    let scaled = report.roles.get(role).map(|r| r.ops_per_s).ok_or_else(|| {
        Error::failed(format!(
            "crosscheck: the {} run of {} reported no {role} role",
            report.engine, report.model
        ))
    })?;
    let others = report
        .roles
        .iter()
        .filter(|(name, _)| name.as_str() != role)
        .map(|(name, r)| (name.clone(), r.ops_per_s))
        .collect();
    Ok((scaled, others))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::machine;
    use std::path::Path;

    fn plan(locks: Vec<LockKind>) -> Plan {
        let base = machine::load(Path::new("models/machines/default.toml")).unwrap();
        Plan {
            models: vec!["models/synchro.toml".into()],
            cpus: vec![1],
            locks,
            repeats: 2,
            duration: Duration::from_millis(10),
            seed: None,
            machine_file: "models/machines/default.toml".into(),
            machine: base,
            preempt: Preempt::User,
            recalibrate: None,
            control: false,
        }
    }

    #[test]
    fn a_row_that_fails_is_kept_as_failed_and_the_rows_after_it_still_run() {
        let plan = plan(vec![LockKind::Tas, LockKind::Rwsem, LockKind::Mutex]);
        let points = points(&plan).unwrap();
        let mut measured = Vec::new();
        let mut seen = Vec::new();
        let check = rows_of(
            &plan,
            &points,
            |point| {
                measured.push(point.native.lock);
                if point.native.lock == LockKind::Rwsem {
                    return Err(Error::failed("calibrate: the storm did not settle"));
                }
                Ok(CrossRow {
                    native_ops_per_s: vec![1.0, 2.0],
                    sim_ops_per_s: vec![1.5, 2.5],
                    ..point.row(&plan)
                })
            },
            |row| {
                seen.push(row.failed.clone());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(measured, [LockKind::Tas, LockKind::Rwsem, LockKind::Mutex]);
        assert_eq!(
            seen.len(),
            3,
            "every row reaches on_row, the failed one too"
        );
        let failed = &check.rows[1];
        assert_eq!(failed.lock, LockKind::Rwsem);
        assert_eq!(
            failed.failed.as_deref(),
            Some("calibrate: the storm did not settle")
        );
        assert!(failed.native_ops_per_s.is_empty() && failed.sim_ops_per_s.is_empty());
        assert_eq!(failed.seeds, [2, 3], "the seeds it would have run");
        for row in [&check.rows[0], &check.rows[2]] {
            assert_eq!(row.failed, None);
            assert_eq!(row.native_ops_per_s, [1.0, 2.0]);
        }
    }

    #[test]
    fn a_recalibrated_point_runs_both_sides_on_the_new_profile() {
        let plan = plan(vec![LockKind::Rwsem]);
        let base = plan.machine.clone();
        let point = points(&plan).unwrap().remove(0);
        let mut now = base.clone();
        now.work.vma_visit_ns += 100.0;
        now.sched.wakeup_idle_ns *= 2.0;
        let moved = point.on(&now);
        assert_eq!(moved.native.engine.machine(), &now);
        assert_eq!(moved.sim.engine.machine(), &now);
        assert!(
            matches!(moved.sim.engine, RunEngine::Sim(_)),
            "still simulated"
        );
        assert_eq!(
            point.sim.engine.machine(),
            &base,
            "the plan's point is kept"
        );
    }

    /// The profile each run of a row ran on, by calibration: `every` row
    /// or repeat, three repeats of synchro's 10 ms at one CPU, each fake
    /// calibration a vma visit of its own (100, 200, 300 ns).
    fn profiles_run_on(every: Every) -> (CrossRow, Vec<(bool, u64, f64)>) {
        let mut plan = plan(vec![LockKind::Tas]);
        plan.repeats = 3;
        plan.recalibrate = Some(Recalibrate {
            plan: calibrate::Plan {
                trials: 1,
                quick: true,
                storm_cpus: None,
            },
            model: crate::model::load(Path::new("models/synchro.toml"), &[]).unwrap(),
            every,
        });
        let point = points(&plan).unwrap().remove(0);
        let mut calibrations = 0.0;
        let mut calibrate = |cpus: usize| {
            assert_eq!(cpus, 1, "the row's CPUs");
            calibrations += 1.0;
            let mut machine = plan.machine.clone();
            machine.work.vma_visit_ns = 100.0 * calibrations;
            Ok(Calibrated {
                machine,
                notes: BTreeMap::new(),
            })
        };
        let ran = std::sync::Mutex::new(Vec::new());
        let run = |cfg: &RunConfig, seed: u64| {
            let sim = matches!(cfg.engine, RunEngine::Sim(_));
            let visit = cfg.engine.machine().work.vma_visit_ns;
            ran.lock().unwrap().push((sim, seed, visit));
            run_once(cfg, seed)
        };
        let row = measure_with(&plan, &point, &ProgressBar::hidden(), &mut calibrate, run).unwrap();
        let mut ran = ran.into_inner().unwrap();
        ran.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (row, ran)
    }

    #[test]
    fn calibrated_every_repeat_each_pair_of_runs_shares_its_own_profile() {
        let (row, ran) = profiles_run_on(Every::Repeat);
        let visits: Vec<f64> = row
            .calibrated
            .iter()
            .map(|c| c.machine.work.vma_visit_ns)
            .collect();
        assert_eq!(
            visits,
            [100.0, 200.0, 300.0],
            "a profile per repeat, in seed order"
        );
        assert_eq!(
            ran,
            [
                (false, 2, 100.0),
                (false, 3, 200.0),
                (false, 4, 300.0),
                (true, 2, 100.0),
                (true, 3, 200.0),
                (true, 4, 300.0),
            ],
            "(simulated, seed, visit) of every run"
        );
        assert_eq!(row.native_ops_per_s.len(), 3);
        assert_eq!(row.sim_ops_per_s.len(), 3);
    }

    #[test]
    fn a_control_runs_the_native_side_again_after_the_simulated_one() {
        let mut plan = plan(vec![LockKind::Tas]);
        plan.repeats = 3;
        plan.control = true;
        let point = points(&plan).unwrap().remove(0);
        let ran = std::sync::Mutex::new(Vec::new());
        // Each native run reports one more than the native run before it,
        // so the second pass cannot pass for the first.
        let run = |cfg: &RunConfig, seed: u64| {
            let sim = matches!(cfg.engine, RunEngine::Sim(_));
            let mut ran = ran.lock().unwrap();
            ran.push((sim, seed));
            let mut report = run_once(cfg, seed)?;
            let natives = ran.iter().filter(|(sim, _)| !sim).count();
            if !sim {
                report.roles.get_mut("monitor").unwrap().ops_per_s = natives as f64;
            }
            Ok(report)
        };
        let never = &mut |_: usize| -> Result<Calibrated> { unreachable!("no calibration") };
        let row = measure_with(&plan, &point, &ProgressBar::hidden(), never, run).unwrap();
        let ran = ran.into_inner().unwrap();
        let natives: Vec<u64> = ran.iter().filter(|r| !r.0).map(|r| r.1).collect();
        assert_eq!(natives, [2, 3, 4, 2, 3, 4], "the seeds twice, in order");
        let last_sim = ran.iter().rposition(|r| r.0).unwrap();
        assert_eq!(last_sim, 5, "every simulated run before the second pass");
        assert_eq!(row.native_ops_per_s, [1.0, 2.0, 3.0]);
        assert_eq!(row.native_again_ops_per_s, [4.0, 5.0, 6.0]);
        assert_eq!(row.sim_ops_per_s.len(), 3);
    }

    #[test]
    fn calibrated_every_row_all_runs_share_the_rows_one_profile() {
        let (row, ran) = profiles_run_on(Every::Row);
        assert_eq!(row.calibrated.len(), 1);
        assert_eq!(row.calibrated[0].machine.work.vma_visit_ns, 100.0);
        assert_eq!(ran.len(), 6);
        assert!(ran.iter().all(|&(_, _, visit)| visit == 100.0), "{ran:?}");
    }
}
