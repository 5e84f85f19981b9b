//! What a sweep is: its parameters, the deterministic list of points they
//! expand to, and the finished points a sweep folder holds. A point carries
//! everything a runner needs, so an engine adapter never looks back at the
//! sweep.

use super::{RunReport, SCHEMA, Shard};
use crate::locks::LockKind;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The x axis of a scaling curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    /// `--threads 1,2,4`: threads of the model's scaled role.
    Threads(Vec<u32>),
    /// `--vary SECTION.KEY=V1,V2`: a model value, applied as one more `--set`.
    Vary { key: String, values: Vec<String> },
    /// `--engine sim --cpus 1,2,4`: the simulated machine's virtual CPUs.
    Cpus(Vec<u32>),
}

impl XAxis {
    /// The key of the CPUs axis.
    pub const CPUS: &'static str = "cpus";

    /// The axis name as plots and tables print it (`threads`, `world.tasks`).
    pub fn key(&self) -> &str {
        match self {
            XAxis::Threads(_) => "threads",
            XAxis::Vary { key, .. } => key,
            XAxis::Cpus(_) => XAxis::CPUS,
        }
    }

    /// Every x value as written on the command line, in the given order.
    pub fn labels(&self) -> Vec<String> {
        match self {
            XAxis::Threads(n) | XAxis::Cpus(n) => n.iter().map(u32::to_string).collect(),
            XAxis::Vary { values, .. } => values.clone(),
        }
    }
}

/// Which engine runs a sweep's points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// This machine's threads, one point at a time.
    #[default]
    Native,
    /// The simulator's virtual CPUs; its points may run side by side.
    Sim,
}

impl EngineKind {
    /// The name `--engine` and reports use.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Native => "native",
            EngineKind::Sim => "sim",
        }
    }
}

/// Where a sweep's points run: `--engine`, `--machine`, `--preempt` and
/// `--cpus`, as the sweep's defaults resolved them. The default (what a
/// sweep.json or results.json written before engines were recorded reads
/// as) is the native engine with the default machine profile.
///
/// In [`SweepParams`] `cpus` is the CPU count every point shares (None when
/// CPUs are the x axis, or natively); in a [`SweepPoint`] it is that point's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepEngine {
    pub kind: EngineKind,
    /// `--machine` as given; None: the default profile.
    pub machine: Option<String>,
    /// The preemption model's name (sim only; `none`, `voluntary`, `full`).
    pub preempt: Option<String>,
    /// Virtual CPUs (sim only).
    pub cpus: Option<u32>,
}

impl SweepEngine {
    /// True when the points run on the simulator.
    pub fn is_sim(&self) -> bool {
        self.kind == EngineKind::Sim
    }
}

/// A whole sweep, as `rmap-storm sweep` was asked for it. Stored as
/// DIR/sweep.json and inside results.json, so a folder says what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepParams {
    /// The model file's path as given.
    pub model: String,
    pub locks: Vec<LockKind>,
    pub x: XAxis,
    /// Threads of the scaled role when the x axis is a model value or the
    /// CPUs; `None` keeps the model's own count.
    pub threads: Option<u32>,
    /// Runs per (x, lock) pair: the samples behind error bars and comparisons.
    pub repeat: u32,
    /// Requested length of each run, milliseconds.
    pub duration_ms: u64,
    /// Repeat r of every (x, lock) pair runs with seed `seed + r`: the same random
    /// stream for every lock and x (common random numbers), a new one per repeat.
    pub seed: u64,
    /// `--set SECTION.KEY=VALUE` overrides, in the order given.
    pub overrides: Vec<String>,
    /// The slice of the point list this folder runs; `None` = all of it.
    pub shard: Option<Shard>,
    /// Where every point runs; absent in files from before it was recorded
    /// (they were all native).
    #[serde(default)]
    pub engine: SweepEngine,
}

/// One run of a sweep: self-contained, so a runner needs nothing else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Position in the full (unsharded) point list; names DIR/points/NNNN.json.
    pub index: usize,
    pub model: String,
    pub lock: LockKind,
    /// The x axis name (`threads`, `cpus` or the `--vary` key).
    pub x_key: String,
    /// This point's x value as written on the command line.
    pub x: String,
    /// Position of `x` on the axis, for ordering.
    pub x_index: usize,
    pub repeat: u32,
    pub seed: u64,
    /// Threads of the scaled role; `None` keeps the model's.
    pub threads: Option<u32>,
    pub duration_ms: u64,
    /// The sweep's `--set` overrides, then the `--vary` one for this x.
    pub overrides: Vec<String>,
    /// Where this point runs, its CPUs filled in on the simulator.
    #[serde(default)]
    pub engine: SweepEngine,
}

impl SweepPoint {
    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.duration_ms)
    }

    /// `spinlock threads=4 #2` (on the simulator `spinlock threads=4 cpus=64
    /// #2`, unless CPUs are the x axis): how progress lines and errors name a
    /// point.
    pub fn label(&self) -> String {
        let cpus = match self.engine.cpus {
            Some(n) if self.x_key != XAxis::CPUS => format!(" cpus={n}"),
            _ => String::new(),
        };
        format!(
            "{} {}={}{cpus} #{}",
            self.lock,
            self.x_key,
            self.x,
            self.repeat + 1
        )
    }
}

/// A finished point: the run's own report plus where it sits in the sweep.
/// Serialized as the RunReport's JSON with one more key, `point`, so every
/// entry of results.json still reads as a run JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRun {
    #[serde(flatten)]
    pub report: RunReport,
    pub point: SweepPoint,
}

impl SweepParams {
    /// Every point, in run order: repeat, then x, then lock (innermost).
    ///
    /// Repeat outermost so an interrupted sweep still holds whole curves, and a
    /// slow drift of the machine (heat, a neighbour's job) spreads over every
    /// point instead of biasing the last x values.
    pub fn points(&self) -> Vec<SweepPoint> {
        let labels = self.x.labels();
        let mut points = Vec::with_capacity(self.len());
        for repeat in 0..self.repeat {
            for (x_index, x) in labels.iter().enumerate() {
                for &lock in &self.locks {
                    points.push(self.point(points.len(), lock, x_index, x, repeat));
                }
            }
        }
        points
    }

    /// The points of this sweep's shard (all of them when unsharded).
    pub fn shard_points(&self) -> Vec<SweepPoint> {
        let mut points = self.points();
        if let Some(shard) = self.shard {
            points.retain(|p| shard.contains(p.index));
        }
        points
    }

    /// Number of points of the whole (unsharded) sweep.
    pub fn len(&self) -> usize {
        self.repeat as usize * self.x.labels().len() * self.locks.len()
    }

    /// True when the sweep has no point at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// These parameters without the shard: what every shard of one sweep shares.
    pub fn unsharded(&self) -> SweepParams {
        SweepParams {
            shard: None,
            ..self.clone()
        }
    }

    fn point(
        &self,
        index: usize,
        lock: LockKind,
        x_index: usize,
        x: &str,
        repeat: u32,
    ) -> SweepPoint {
        let mut overrides = self.overrides.clone();
        let mut engine = self.engine.clone();
        let threads = match &self.x {
            XAxis::Threads(threads) => Some(threads[x_index]),
            XAxis::Vary { key, .. } => {
                overrides.push(format!("{key}={x}"));
                self.threads
            }
            XAxis::Cpus(cpus) => {
                engine.cpus = Some(cpus[x_index]);
                self.threads
            }
        };
        SweepPoint {
            index,
            model: self.model.clone(),
            lock,
            x_key: self.x.key().to_string(),
            x: x.to_string(),
            x_index,
            repeat,
            seed: self.seed.wrapping_add(u64::from(repeat)),
            threads,
            duration_ms: self.duration_ms,
            overrides,
            engine,
        }
    }
}

/// Everything a sweep folder holds, as results.json spells it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResults {
    /// [`SCHEMA`] when written by this build.
    pub schema: u32,
    pub sweep: SweepParams,
    /// Finished points, by point index.
    pub runs: Vec<PointRun>,
}

impl SweepResults {
    /// The results of `sweep` so far: `runs`, sorted by point index.
    pub fn new(sweep: SweepParams, mut runs: Vec<PointRun>) -> SweepResults {
        runs.sort_by_key(|r| r.point.index);
        SweepResults {
            schema: SCHEMA,
            sweep,
            runs,
        }
    }

    /// Whether the point `index` has finished.
    pub fn holds(&self, index: usize) -> bool {
        self.runs
            .binary_search_by_key(&index, |r| r.point.index)
            .is_ok()
    }

    /// Add a finished point, keeping index order; a point already held is kept
    /// as it is and `run` dropped.
    pub fn insert(&mut self, run: PointRun) {
        if let Err(at) = self
            .runs
            .binary_search_by_key(&run.point.index, |r| r.point.index)
        {
            self.runs.insert(at, run);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim_params(x: XAxis, cpus: Option<u32>) -> SweepParams {
        SweepParams {
            model: "m.toml".into(),
            locks: vec![LockKind::Spinlock, LockKind::Rwsem],
            x,
            threads: Some(4),
            repeat: 1,
            duration_ms: 5,
            seed: 1,
            overrides: vec![],
            shard: None,
            engine: SweepEngine {
                kind: EngineKind::Sim,
                machine: Some("p.toml".into()),
                preempt: Some("none".into()),
                cpus,
            },
        }
    }

    #[test]
    fn a_cpus_axis_gives_each_point_its_cpus_and_the_fixed_threads() {
        let params = sim_params(XAxis::Cpus(vec![1, 8, 64]), None);
        let points = params.points();
        assert_eq!(points.len(), 6);
        for (point, cpus) in points.iter().zip([1, 1, 8, 8, 64, 64]) {
            assert_eq!((point.engine.cpus, point.threads), (Some(cpus), Some(4)));
            assert_eq!(point.x, cpus.to_string());
            assert_eq!(point.x_key, "cpus");
            assert_eq!(point.engine.preempt.as_deref(), Some("none"));
            assert_eq!(point.engine.machine.as_deref(), Some("p.toml"));
        }
        assert_eq!(points[3].label(), "rwsem cpus=8 #1");
    }

    #[test]
    fn labels_name_the_cpus_of_simulated_points_only() {
        let sim = sim_params(XAxis::Threads(vec![2, 4]), Some(64));
        assert_eq!(sim.points()[2].label(), "spinlock threads=4 cpus=64 #1");
        let native = SweepParams {
            engine: SweepEngine::default(),
            ..sim
        };
        assert_eq!(native.points()[2].label(), "spinlock threads=4 #1");
    }

    /// sweep.json and points written before engines were recorded read as
    /// native sweeps with the default profile.
    #[test]
    fn files_without_an_engine_read_as_native() {
        let mut value = serde_json::to_value(sim_params(XAxis::Threads(vec![1]), None)).unwrap();
        value.as_object_mut().unwrap().remove("engine");
        let old: SweepParams = serde_json::from_value(value).unwrap();
        assert_eq!(old.engine, SweepEngine::default());
        assert_eq!(old.engine.kind, EngineKind::Native);
        assert!(!old.engine.is_sim() && old.engine.machine.is_none());
        let mut point = serde_json::to_value(&old.points()[0]).unwrap();
        point.as_object_mut().unwrap().remove("engine");
        let point: SweepPoint = serde_json::from_value(point).unwrap();
        assert_eq!(point.engine, SweepEngine::default());
    }
}
