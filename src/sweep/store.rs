//! A sweep folder on disk (its layout: [`crate::fileio::results`]), and the
//! rule that keeps it whole: every file goes through
//! [`crate::fileio::write_atomic`], the points are the record, and results.*
//! are rewritten whole after each point, so a sweep killed at any moment keeps
//! every finished point.

use crate::fileio::results::{PARAMS_FILE, POINTS_DIR, RESULTS_CSV, RESULTS_JSON, read_points};
use crate::fileio::{read_json, remove_temps, visible_entries, write_json};
use crate::report::csv;
use crate::results::{PointRun, SweepParams, SweepResults};
use crate::{Error, Result};
use std::fs;
use std::path::Path;

/// The atomic writer, re-exported where it lived before [`crate::fileio`]
/// (the calibrate command of branch `machine` still names it here).
pub use crate::fileio::{temp_path, write_atomic};

/// The finished points an `--out` folder already holds for `params` (in file
/// name order), checked before anything is written. A missing or empty folder holds none; a folder
/// of the same sweep is resumed; anything else is refused.
pub fn existing_runs(out: &Path, params: &SweepParams) -> Result<Vec<PointRun>> {
    let shown = out.display();
    if !out.exists() {
        return Ok(Vec::new());
    }
    if !out.is_dir() {
        return Err(Error::usage(format!(
            "--out {shown}: exists and is not a folder"
        )));
    }
    if out.join(PARAMS_FILE).exists() {
        let held: SweepParams = read_json(&out.join(PARAMS_FILE))?;
        if &held != params {
            return Err(Error::usage(format!(
                "--out {shown}: holds a different sweep (its {PARAMS_FILE} differs); use a new folder"
            )));
        }
        return read_points(out);
    }
    let empty = visible_entries(out)?.is_empty();
    if !empty {
        return Err(Error::usage(format!(
            "--out {shown}: folder is not empty and holds no {PARAMS_FILE}; use a new folder"
        )));
    }
    Ok(Vec::new())
}

/// Make `out` a folder of the sweep `params`: create it, drop leftover temp
/// files, and record the parameters.
pub fn create(out: &Path, params: &SweepParams) -> Result<()> {
    let points = out.join(POINTS_DIR);
    fs::create_dir_all(&points)
        .map_err(|e| Error::failed(format!("creating {}: {e}", points.display())))?;
    for dir in [out, points.as_path()] {
        remove_temps(dir)?;
    }
    write_json(&out.join(PARAMS_FILE), params)
}

/// Record one finished point as DIR/points/NNNN.json.
pub fn save_point(out: &Path, run: &PointRun) -> Result<()> {
    let name = format!("{:04}.json", run.point.index);
    write_json(&out.join(POINTS_DIR).join(name), run)
}

/// Rebuild results.json and results.csv from `results`.
pub fn save_results(out: &Path, results: &SweepResults) -> Result<()> {
    write_json(&out.join(RESULTS_JSON), results)?;
    write_atomic(
        &out.join(RESULTS_CSV),
        &csv::to_bytes(&csv::rows(&results.runs))?,
    )
}
