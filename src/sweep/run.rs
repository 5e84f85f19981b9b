//! The sweep loop: check every point, then run the ones the folder does not
//! hold yet, one at a time, recording each as soon as it finishes.
//!
//! Points run one after another, never in parallel: a native point measures the
//! machine, and two at once would measure each other.

use super::{Runner, store};
use crate::results::{PointRun, SweepParams, SweepPoint, SweepResults};
use crate::{Error, Result};
use indicatif::ProgressBar;
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
/// error, keeping every point finished before it.
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
    let mut results = SweepResults::new(params.clone(), held);
    let resumed = results.runs.len();
    progress.set_length(points.len() as u64);
    progress.set_position(resumed as u64);
    let pending: Vec<&SweepPoint> = points.iter().filter(|p| !results.holds(p.index)).collect();
    for point in &pending {
        progress.set_message(point.label());
        let report = runner.run(point).map_err(|e| at_point(e, point))?;
        let run = PointRun {
            report,
            point: (*point).clone(),
        };
        store::save_point(out, &run)?;
        results.insert(run);
        store::save_results(out, &results)?;
        progress.inc(1);
    }
    Ok(SweepOutcome {
        results,
        ran: pending.len(),
        resumed,
    })
}

/// The runner's error, naming the point, of the same kind (usage or failure).
fn at_point(e: Error, point: &SweepPoint) -> Error {
    let named = |m: String| format!("point {} ({}): {m}", point.index, point.label());
    match e {
        Error::Usage(m) => Error::Usage(named(m)),
        Error::Failed(m) => Error::Failed(named(m)),
    }
}
