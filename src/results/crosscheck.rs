//! What `rmap-storm crosscheck` measured: for each (model, CPUs, lock kind),
//! the scaled role's throughput of every repeat on real threads and on the
//! simulator, the same seeds on both sides. The medians and errors are the
//! report layer's ([`crate::report::crosscheck`]).

use crate::locks::LockKind;
use crate::model::machine::MachineProfile;
use serde::Serialize;
use std::collections::BTreeMap;

/// A whole cross-check (`crosscheck --json` writes it as it is).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrossCheck {
    /// The simulator's machine profile: its file and its `name`.
    pub machine_file: String,
    pub machine_name: String,
    /// Length of every run, seconds (wall natively, virtual simulated).
    pub duration_s: f64,
    /// The simulator's preemption model (none, voluntary, full).
    pub preempt: String,
    /// Some(trials a figure) when every row ran on a profile calibrated
    /// just before its native runs, `machine_file` its base.
    pub recalibrated: Option<usize>,
    /// With `recalibrated`: whether each repeat had a profile of its own
    /// (calibrated before its native run) rather than the row one.
    pub per_repeat: bool,
    /// Whether every row's native side ran a second time, after its
    /// simulated side (`crosscheck --control`).
    pub control: bool,
    pub rows: Vec<CrossRow>,
}

/// One (model, CPUs, kind): both engines' figures, repeat by repeat.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrossRow {
    /// The model file's stem (`aim7-fork-storm`).
    pub model: String,
    /// The scaled role (`workload.scale`), whose ops/s are compared.
    pub role: String,
    /// CPUs on both sides: pinned natively, virtual simulated; also the
    /// scaled role's threads.
    pub cpus: u32,
    pub lock: LockKind,
    /// Seed of each repeat, the same on both sides.
    pub seeds: Vec<u64>,
    /// The scaled role's done operations per second, per repeat, on real
    /// threads (per wall second).
    pub native_ops_per_s: Vec<f64>,
    /// The same on the simulator (per virtual second).
    pub sim_ops_per_s: Vec<f64>,
    /// With a control: the scaled role's native ops/s again, the same seeds
    /// run a second time after the simulated side; empty without.
    pub native_again_ops_per_s: Vec<f64>,
    /// The model's other roles in the same runs, by name. The row's error
    /// is the scaled role's; these are shown beside it, since a world that
    /// grows differently on the two sides (longer walks, more direct
    /// reclaim) often shows first in the roles that are not scaled.
    pub others: BTreeMap<String, RoleRates>,
    /// The profiles the row ran on when the check calibrated: one for the
    /// row, or one per repeat in the seeds' order; none without.
    pub calibrated: Vec<Calibrated>,
    /// Why the row has no figures: its calibration or one of its runs
    /// failed (the error's one line). The check went on to the next row.
    pub failed: Option<String>,
}

impl CrossRow {
    /// Whether its repeats are pairs: each native run and its simulated
    /// twin ran on a profile of their own, calibrated just before the
    /// native one.
    pub fn paired(&self) -> bool {
        self.calibrated.len() > 1
    }
}

/// One role's done operations per second, per repeat, on both sides.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RoleRates {
    pub native_ops_per_s: Vec<f64>,
    pub sim_ops_per_s: Vec<f64>,
}

/// A profile calibrated for one row, and each key's note (measured, and
/// how; or copied from the base), as `calibrate` writes them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibrated {
    pub machine: MachineProfile,
    pub notes: BTreeMap<String, String>,
}
