//! Reading the tool's result files back: a run's JSON, a sweep folder, or a
//! sweep's results.json, each checked against the schemas this build reads.
//!
//! A sweep folder (written by the sweep layer, `sweep::store`):
//!
//! ```text
//! DIR/sweep.json          the SweepParams (what this folder is a run of)
//! DIR/points/NNNN.json    one finished point: its RunReport plus `point`
//! DIR/results.json        {"schema": 2, "sweep": {...}, "runs": [...]}
//! DIR/results.csv         tidy: one row per run and role
//! DIR/*.png, DIR/*.svg    the plots
//! ```
//!
//! The points are the record; results.* are rebuilt from them.

use super::{read_json, visible_entries};
use crate::results::{PointRun, RunReport, SweepParams, SweepResults, check_schema};
use crate::{Error, Result};
use serde_json::Value;
use std::path::Path;

pub const PARAMS_FILE: &str = "sweep.json";
pub const RESULTS_JSON: &str = "results.json";
pub const RESULTS_CSV: &str = "results.csv";
pub const POINTS_DIR: &str = "points";

/// What a result path held.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultFile {
    /// A run JSON (`run --json`).
    Run(Box<RunReport>),
    /// A sweep folder or its results.json.
    Sweep(Box<SweepResults>),
}

/// Read `path`: a sweep folder, a results.json, or a run JSON.
pub fn read_any(path: &Path) -> Result<ResultFile> {
    if path.is_dir() {
        return read_sweep(path).map(|s| ResultFile::Sweep(Box::new(s)));
    }
    let value: Value = read_json(path)?;
    let parsed = if value.get("runs").is_some() {
        serde_json::from_value(value).map(|s| ResultFile::Sweep(Box::new(s)))
    } else {
        serde_json::from_value(value).map(|r| ResultFile::Run(Box::new(r)))
    };
    let file = parsed
        .map_err(|e| Error::usage(format!("{}: not a run or sweep JSON: {e}", path.display())))?;
    match &file {
        ResultFile::Run(run) => schema_ok(path, run.schema)?,
        ResultFile::Sweep(sweep) => sweep_schema_ok(path, sweep)?,
    }
    Ok(file)
}

/// Read a sweep: a folder (its sweep.json and points, or else its
/// results.json) or a results.json file.
pub fn read_sweep(path: &Path) -> Result<SweepResults> {
    if path.is_dir() {
        if path.join(PARAMS_FILE).exists() {
            let sweep: SweepParams = read_json(&path.join(PARAMS_FILE))?;
            return Ok(SweepResults::new(sweep, read_points(path)?));
        }
        if path.join(RESULTS_JSON).exists() {
            return read_results_json(&path.join(RESULTS_JSON));
        }
        return Err(Error::usage(format!(
            "{}: not a sweep folder (no {PARAMS_FILE} or {RESULTS_JSON})",
            path.display()
        )));
    }
    read_results_json(path)
}

/// Every DIR/points/*.json, in file name order, each of a readable schema.
pub fn read_points(dir: &Path) -> Result<Vec<PointRun>> {
    let points = dir.join(POINTS_DIR);
    if !points.exists() {
        return Ok(Vec::new());
    }
    visible_entries(&points)?
        .iter()
        .map(|path| {
            let run: PointRun = read_json(path)?;
            schema_ok(path, run.report.schema)?;
            Ok(run)
        })
        .collect()
}

fn read_results_json(path: &Path) -> Result<SweepResults> {
    let results: SweepResults = read_json(path)?;
    sweep_schema_ok(path, &results)?;
    Ok(results)
}

fn sweep_schema_ok(path: &Path, results: &SweepResults) -> Result<()> {
    schema_ok(path, results.schema)?;
    results
        .runs
        .iter()
        .try_for_each(|run| schema_ok(path, run.report.schema))
}

fn schema_ok(path: &Path, schema: u32) -> Result<()> {
    check_schema(schema).map_err(|e| Error::usage(format!("{}: {e}", path.display())))
}
