//! The sweep loop: check every point, then run the ones the folder does not
//! hold yet, recording each as soon as it finishes.
//!
//! Points run one after another unless the runner says they may run at the
//! same time ([`Runner::parallel`]: simulated points, whose figures depend on
//! nothing but their inputs); then they run on rayon's threads, and the
//! results are the same whatever number of threads ran them, since each
//! point is self-contained and results are kept in point order.

use super::{Runner, store};
use crate::results::{PointRun, SweepParams, SweepPoint, SweepResults};
use crate::{Error, Result};
use indicatif::ProgressBar;
use parking_lot::Mutex;
use rayon::prelude::*;
use std::path::Path;

/// What a finished sweep did.
#[derive(Debug)]
pub struct SweepOutcome {
    /// Every finished point of the folder, by point index.
    pub results: SweepResults,
    /// Points run now.
    pub ran: usize,
    /// Points the folder already held from an earlier, interrupted sweep.
    pub resumed: usize,
}

/// Run the sweep `params` (its shard, if any) into the folder `out`.
///
/// Bad input (invalid parameters, a point the runner rejects in
/// [`Runner::check`], an `--out` that is a file or another sweep's folder) fails
/// before anything is written. A point the runner fails ends the sweep with that
/// error (with parallel points, one of the failed points' errors), keeping every
/// point finished before it; points already running finish and are kept too.
pub fn run(
    params: &SweepParams,
    out: &Path,
    runner: &dyn Runner,
    progress: &ProgressBar,
) -> Result<SweepOutcome> {
    params.validate().map_err(Error::usage)?;
    let held = store::existing_runs(out, params)?;
    let points = params.shard_points();
    for point in &points {
        runner.check(point).map_err(|e| at_point(e, point))?;
    }
    store::create(out, params)?;
    let results = SweepResults::new(params.clone(), held);
    let resumed = results.runs.len();
    progress.set_length(points.len() as u64);
    progress.set_position(resumed as u64);
    let pending: Vec<&SweepPoint> = points.iter().filter(|p| !results.holds(p.index)).collect();
    let folder = Folder {
        out,
        results: Mutex::new(results),
        progress,
    };
    match runner.parallel() {
        Some(shared) => pending
            .par_iter()
            .try_for_each(|point| folder.run(shared, point))?,
        None => pending
            .iter()
            .try_for_each(|point| folder.run(runner, point))?,
    }
    Ok(SweepOutcome {
        results: folder.results.into_inner(),
        ran: pending.len(),
        resumed,
    })
}

/// The folder being filled, shared by the threads that run points.
struct Folder<'a> {
    out: &'a Path,
    /// Every finished point; results.json and results.csv are rewritten
    /// from it under this lock, so the last write holds them all.
    results: Mutex<SweepResults>,
    progress: &'a ProgressBar,
}

impl Folder<'_> {
    /// Run one point and record it: its own file first (no other thread
    /// writes it), then results.* whole.
    fn run(&self, runner: &dyn Runner, point: &SweepPoint) -> Result<()> {
        self.progress.set_message(point.label());
        let report = runner.run(point).map_err(|e| at_point(e, point))?;
        let run = PointRun {
            report,
            point: point.clone(),
        };
        store::save_point(self.out, &run)?;
        let mut results = self.results.lock();
        results.insert(run);
        store::save_results(self.out, &results)?;
        self.progress.inc(1);
        Ok(())
    }
}

/// The runner's error, naming the point, of the same kind (usage or failure).
fn at_point(e: Error, point: &SweepPoint) -> Error {
    let named = |m: String| format!("point {} ({}): {m}", point.index, point.label());
    match e {
        Error::Usage(m) => Error::Usage(named(m)),
        Error::Failed(m) => Error::Failed(named(m)),
    }
}
