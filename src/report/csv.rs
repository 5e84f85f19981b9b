//! results.csv: tidy data, one row per run and role, for pandas, R or a
//! spreadsheet. Run-wide figures (context switches, the main lock class) repeat
//! on each role's row so every row stands alone. Columns added after the
//! first release (`failed`, `gave_up`, `cpus`, then `cpus_used`) come last,
//! so older columns keep their positions.

use super::pick::main_lock_class;
use crate::locks::LockKind;
use crate::results::{PointRun, Verdict};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// One row of results.csv; the field order is the column order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    /// The point's index in the sweep (DIR/points/NNNN.json).
    pub point: usize,
    pub model: String,
    pub engine: String,
    pub lock: LockKind,
    /// The x axis name (`threads` or the `--vary` key) and this run's value.
    pub x_key: String,
    pub x: String,
    /// 0-based repeat of this (x, lock) pair.
    pub repeat: u32,
    pub seed: u64,
    /// Length of the run, seconds: measured wall time natively, virtual
    /// time simulated.
    pub duration_s: f64,
    pub role: String,
    /// Threads of this role.
    pub threads: u32,
    /// Done operations (failed and given-up ones are in their own columns).
    pub ops: u64,
    pub ops_per_s: f64,
    pub latency_p50_ns: u64,
    pub latency_p99_ns: u64,
    pub latency_p999_ns: u64,
    pub latency_max_ns: u64,
    pub ctx_voluntary_per_s: f64,
    pub ctx_involuntary_per_s: f64,
    /// The class `wait_share` and `contended_pct` describe (see
    /// [`main_lock_class`]); empty when the run reports no lock class.
    pub lock_class: String,
    /// Share of thread time spent waiting for `lock_class`, 0..1.
    pub wait_share: Option<f64>,
    pub contended_pct: Option<f64>,
    /// `ok`, `starved ROLE` or `livelock` (the reason is in results.json).
    pub verdict: String,
    /// Operations that could not be done (0 in a schema-1 file's rows).
    #[serde(default)]
    pub failed: u64,
    /// Operations that gave up on a contended try_lock.
    #[serde(default)]
    pub gave_up: u64,
    /// CPUs the run had: online natively, virtual simulated (0 in rows of
    /// files written before it was reported).
    #[serde(default)]
    pub cpus: u32,
    /// The CPUs' worth this role's threads ran over the run's span (0 in
    /// rows of files written before it was reported).
    #[serde(default)]
    pub cpus_used: f64,
}

/// The rows of `runs`, in point order then role name order.
pub fn rows(runs: &[PointRun]) -> Vec<CsvRow> {
    runs.iter().flat_map(run_rows).collect()
}

fn run_rows(run: &PointRun) -> impl Iterator<Item = CsvRow> + '_ {
    let (report, point) = (&run.report, &run.point);
    let class = main_lock_class(report);
    report.roles.iter().map(move |(role, figures)| CsvRow {
        point: point.index,
        model: report.model.clone(),
        engine: report.engine.clone(),
        lock: report.lock,
        x_key: point.x_key.clone(),
        x: point.x.clone(),
        repeat: point.repeat,
        seed: report.seed,
        duration_s: report.duration_s,
        role: role.clone(),
        threads: figures.threads,
        ops: figures.ops,
        ops_per_s: figures.ops_per_s,
        latency_p50_ns: figures.latency_ns.p50,
        latency_p99_ns: figures.latency_ns.p99,
        latency_p999_ns: figures.latency_ns.p999,
        latency_max_ns: figures.latency_ns.max,
        ctx_voluntary_per_s: report.ctx_switches.voluntary_per_s,
        ctx_involuntary_per_s: report.ctx_switches.involuntary_per_s,
        lock_class: class.map(|(name, _)| name.to_string()).unwrap_or_default(),
        wait_share: class.map(|(_, c)| c.wait_share),
        contended_pct: class.map(|(_, c)| c.contended_pct),
        verdict: verdict_word(&report.verdict),
        failed: figures.failed,
        gave_up: figures.gave_up,
        cpus: report.cpus,
        cpus_used: figures.cpus_used,
    })
}

/// The verdict without its reason: a category to group rows by.
fn verdict_word(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Ok => "ok".into(),
        Verdict::Starved { role, .. } => format!("starved {role}"),
        Verdict::Livelock { .. } => "livelock".into(),
    }
}

/// The CSV text of `rows`, with a header line.
pub fn to_bytes(rows: &[CsvRow]) -> Result<Vec<u8>> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row).map_err(csv_error)?;
    }
    writer
        .into_inner()
        .map_err(|e| Error::failed(format!("writing CSV: {e}")))
}

/// Parse CSV text written by [`to_bytes`].
pub fn from_reader(reader: impl std::io::Read) -> Result<Vec<CsvRow>> {
    ::csv::Reader::from_reader(reader)
        .deserialize()
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::usage(format!("reading CSV: {e}")))
}

fn csv_error(e: ::csv::Error) -> Error {
    Error::failed(format!("writing CSV: {e}"))
}
