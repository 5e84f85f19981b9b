//! `rmap-storm merge`: join the folders of one sweep's shards into one.

use super::{PointRun, store};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Join the sweep folders `inputs` (shards of one sweep, or partial runs of it)
/// into the folder `out`, which may already hold an earlier merge of the same
/// sweep. A point held twice is taken from the first folder that holds it.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<store::SweepResults> {
    let Some(first) = inputs.first() else {
        return Err(Error::usage("merge: no sweep folder given"));
    };
    let loaded = inputs
        .iter()
        .map(|path| store::load(path))
        .collect::<Result<Vec<_>>>()?;
    let params = loaded[0].sweep.unsharded();
    if let Some((other, _)) = inputs
        .iter()
        .zip(&loaded)
        .find(|(_, l)| l.sweep.unsharded() != params)
    {
        return Err(Error::usage(format!(
            "merge: {} and {} are not shards of one sweep (their {} differ beyond the shard)",
            first.display(),
            other.display(),
            store::PARAMS_FILE
        )));
    }
    let mut runs: Vec<PointRun> = store::existing_runs(out, &params)?;
    for run in loaded.into_iter().flat_map(|l| l.runs) {
        if let Err(at) = runs.binary_search_by_key(&run.point.index, |r| r.point.index) {
            runs.insert(at, run);
        }
    }
    store::create(out, &params)?;
    for run in &runs {
        store::save_point(out, run)?;
    }
    store::save_results(out, &params, &runs)?;
    Ok(store::SweepResults {
        schema: crate::report::run::SCHEMA,
        sweep: params,
        runs,
    })
}
