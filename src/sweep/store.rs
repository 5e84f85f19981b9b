//! A sweep folder on disk, and the rule that keeps it whole.
//!
//! ```text
//! DIR/sweep.json          the SweepParams (what this folder is a run of)
//! DIR/points/NNNN.json    one finished point: its RunReport plus `point`
//! DIR/results.json        {"schema": 1, "sweep": {...}, "runs": [...]}
//! DIR/results.csv         tidy: one row per run and role
//! DIR/*.png, DIR/*.svg    the plots
//! ```
//!
//! Every file is written whole or not at all: into `.tmp-NAME` in the same
//! folder, fsynced, then renamed over NAME (rename within a file system is
//! atomic), and the folder fsynced so the rename itself survives a crash. The
//! points are the record; results.* are rewritten whole after each point, so a
//! sweep killed at any moment keeps every finished point. Only a kill during a
//! write can leave a `.tmp-*` file: readers skip dot files and the next sweep or
//! merge into the folder deletes them.

use super::{PointRun, SweepParams};
use crate::report::{csv, run::SCHEMA};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const PARAMS_FILE: &str = "sweep.json";
pub const RESULTS_JSON: &str = "results.json";
pub const RESULTS_CSV: &str = "results.csv";
pub const POINTS_DIR: &str = "points";
const TEMP_PREFIX: &str = ".tmp-";

/// Everything a sweep folder holds, as results.json spells it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResults {
    /// Always [`SCHEMA`].
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

/// The temp name [`write_atomic`] uses for `path`; it keeps the extension, so
/// writers that pick a format by extension (plotters' bitmap) can use it too.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    path.with_file_name(format!("{TEMP_PREFIX}{name}"))
}

/// Write `bytes` to `path` whole or not at all (see the module doc).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let temp = temp_path(path);
    fs::File::create(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|e| io_error("writing", &temp, e))?;
    commit_temp(path)
}

/// Make the written [`temp_path`] of `path` durable (fsync) and rename it over
/// `path`, then fsync the folder so the rename survives a crash too.
pub fn commit_temp(path: &Path) -> Result<()> {
    let temp = temp_path(path);
    fs::File::open(&temp)
        .and_then(|f| f.sync_all())
        .and_then(|()| fs::rename(&temp, path))
        .map_err(|e| io_error("writing", path, e))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    fs::File::open(dir.unwrap_or(Path::new(".")))
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("syncing the folder of", path, e))
}

/// The finished points an `--out` folder already holds for `params` (in file
/// name order), checked
/// before anything is written. A missing or empty folder holds none; a folder
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
    fs::create_dir_all(&points).map_err(|e| io_error("creating", &points, e))?;
    for dir in [out, points.as_path()] {
        remove_temps(dir)?;
    }
    write_atomic(&out.join(PARAMS_FILE), &to_json(params)?)
}

/// Record one finished point as DIR/points/NNNN.json.
pub fn save_point(out: &Path, run: &PointRun) -> Result<()> {
    let name = format!("{:04}.json", run.point.index);
    write_atomic(&out.join(POINTS_DIR).join(name), &to_json(run)?)
}

/// Rebuild results.json and results.csv from `results`.
pub fn save_results(out: &Path, results: &SweepResults) -> Result<()> {
    write_atomic(&out.join(RESULTS_JSON), &to_json(results)?)?;
    write_atomic(
        &out.join(RESULTS_CSV),
        &csv::to_bytes(&csv::rows(&results.runs))?,
    )
}

/// Read a sweep: a folder (its sweep.json and points, or else its
/// results.json) or a results.json file.
pub fn load(path: &Path) -> Result<SweepResults> {
    if path.is_dir() {
        if path.join(PARAMS_FILE).exists() {
            let sweep = read_json(&path.join(PARAMS_FILE))?;
            return Ok(SweepResults::new(sweep, read_points(path)?));
        }
        if path.join(RESULTS_JSON).exists() {
            return read_results(&path.join(RESULTS_JSON));
        }
        return Err(Error::usage(format!(
            "{}: not a sweep folder (no {PARAMS_FILE} or {RESULTS_JSON})",
            path.display()
        )));
    }
    read_results(path)
}

/// Parse a results.json file, checking its schema.
fn read_results(path: &Path) -> Result<SweepResults> {
    let results: SweepResults = read_json(path)?;
    if results.schema != SCHEMA {
        return Err(Error::usage(format!(
            "{}: schema {} (this build reads schema {SCHEMA})",
            path.display(),
            results.schema
        )));
    }
    Ok(results)
}

/// Every DIR/points/*.json, in file name order.
fn read_points(dir: &Path) -> Result<Vec<PointRun>> {
    let points = dir.join(POINTS_DIR);
    if !points.exists() {
        return Ok(Vec::new());
    }
    visible_entries(&points)?
        .iter()
        .map(|path| read_json::<PointRun>(path))
        .collect()
}

/// Parse one JSON file; a missing or malformed file is bad input.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))
}

fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::failed(format!("serializing JSON: {e}")))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The entries of `dir` that are not dot files (temp files, editor litter), sorted.
fn visible_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("reading", dir, e))?;
        if !entry.file_name().to_string_lossy().starts_with('.') {
            paths.push(entry.path());
        }
    }
    paths.sort();
    Ok(paths)
}

fn remove_temps(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            let path = entry.path();
            fs::remove_file(&path).map_err(|e| io_error("removing", &path, e))?;
        }
    }
    Ok(())
}

fn io_error(doing: &str, path: &Path, e: std::io::Error) -> Error {
    Error::failed(format!("{doing} {}: {e}", path.display()))
}
