//! `rmap-storm merge`: join the folders of one sweep's shards into one.

use super::store;
use crate::fileio::results::{PARAMS_FILE, read_sweep};
use crate::results::SweepResults;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Join the sweep folders `inputs` (shards of one sweep, or partial runs of it)
/// into the folder `out`, which may already hold an earlier merge of the same
/// sweep. A point held twice is kept from `out`, else from the first input
/// that holds it (points follow from the parameters, so copies agree in all
/// but their measurements).
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<SweepResults> {
    let Some(first) = inputs.first() else {
        return Err(Error::usage("merge: no sweep folder given"));
    };
    let loaded = inputs
        .iter()
        .map(|path| read_sweep(path))
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
            PARAMS_FILE
        )));
    }
    let held = store::existing_runs(out, &params)?;
    let mut results = SweepResults::new(params, held);
    for run in loaded.into_iter().flat_map(|l| l.runs) {
        results.insert(run);
    }
    store::create(out, &results.sweep)?;
    for run in &results.runs {
        store::save_point(out, run)?;
    }
    store::save_results(out, &results)?;
    Ok(results)
}
