//! `rmap-storm compare A B`: the LKP robot's table, with mmtests' star.
//!
//! ```text
//!       base  ±stddev%   %change      new  ±stddev%  metric
//!     721721       ±1%   +303.6% !* 2913110       ±3%  spinlock/threads=4/ctx_switches.voluntary_per_s
//! ```
//!
//! Every number in a run's JSON is a metric, named by its dotted path
//! (`roles.reclaim.latency_ns.p99`), except the run's parameters: `schema`,
//! `seed`, `cpus` and thread counts. A sweep's runs are grouped by point (lock and x
//! value); its repeats are a group's samples. Two inputs with one group each
//! (two run files, say) are compared whatever their lock or x; otherwise groups
//! are matched by lock and x. Rows come in group order then metric name order.
//!
//! Marks after `%change`: `!` is LKP's "changed" (at least 3 samples a side and
//! min..max ranges that do not overlap); `*` is mmtests' "significant" (Welch's
//! two-sided t-test at 95%, see [`stats::welch_significant`]).

use super::stats::{self, Summary};
use crate::Result;
use crate::fileio::results::{ResultFile, read_any};
use crate::locks::LockKind;
use crate::results::{RunReport, SweepResults};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// A point of a sweep (or a lone run): what a group of samples measured.
/// Groups of two inputs match when lock, x key and x value are equal; they
/// sort by lock, x key, then x (as numbers when both are numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupKey {
    pub lock: LockKind,
    pub x_key: String,
    pub x: String,
}

impl Ord for GroupKey {
    fn cmp(&self, other: &Self) -> Ordering {
        let numeric = match (self.x.parse::<f64>(), other.x.parse::<f64>()) {
            (Ok(a), Ok(b)) => a.total_cmp(&b),
            _ => Ordering::Equal,
        };
        (self.lock, &self.x_key)
            .cmp(&(other.lock, &other.x_key))
            .then(numeric)
            .then_with(|| self.x.cmp(&other.x))
    }
}

impl PartialOrd for GroupKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for GroupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}={}", self.lock, self.x_key, self.x)
    }
}

/// One sample: every metric of one run.
pub type Metrics = BTreeMap<String, f64>;

/// Every group of an input, with its samples.
pub type Groups = BTreeMap<GroupKey, Vec<Metrics>>;

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub metric: String,
    pub base: Summary,
    pub new: Summary,
    pub change_pct: f64,
    /// LKP's rule: `!`.
    pub changed: bool,
    /// Welch's t-test: `*`.
    pub significant: bool,
}

/// A whole comparison.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    pub rows: Vec<Row>,
    /// Groups, or metrics of matched groups, that only one side has.
    pub only_base: Vec<String>,
    pub only_new: Vec<String>,
}

/// Read `path` (a run JSON file, a results.json, or a sweep folder) as groups.
pub fn load(path: &Path) -> Result<Groups> {
    Ok(match read_any(path)? {
        ResultFile::Run(report) => run_groups(&report),
        ResultFile::Sweep(results) => sweep_groups(&results),
    })
}

fn sweep_groups(results: &SweepResults) -> Groups {
    let mut groups = Groups::new();
    for run in &results.runs {
        let key = GroupKey {
            lock: run.point.lock,
            x_key: run.point.x_key.clone(),
            x: run.point.x.clone(),
        };
        groups.entry(key).or_default().push(metrics(&run.report));
    }
    groups
}

fn run_groups(report: &RunReport) -> Groups {
    let key = GroupKey {
        lock: report.lock,
        x_key: "threads".into(),
        x: report.threads.to_string(),
    };
    Groups::from([(key, vec![metrics(report)])])
}

/// Every metric of a run, by dotted name (see the module doc for what is left out).
pub fn metrics(report: &RunReport) -> Metrics {
    let mut out = Metrics::new();
    let value = serde_json::to_value(report).expect("a RunReport always serializes");
    flatten("", &value, &mut out);
    for parameter in ["schema", "seed", "cpus"] {
        out.remove(parameter);
    }
    out.retain(|name, _| name != "threads" && !name.ends_with(".threads"));
    out
}

fn flatten(prefix: &str, value: &Value, out: &mut Metrics) {
    match value {
        Value::Number(n) => {
            if let Some(v) = n.as_f64() {
                out.insert(prefix.to_string(), v);
            }
        }
        Value::Object(map) => {
            for (key, inner) in map {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&name, inner, out);
            }
        }
        _ => {}
    }
}

/// Compare `base` with `new` (see the module doc for how groups pair up).
pub fn compare(base: &Groups, new: &Groups) -> Comparison {
    let mut result = Comparison::default();
    if base.len() == 1 && new.len() == 1 {
        let (b, n) = (base.values().next(), new.values().next());
        compare_group("", b.unwrap(), n.unwrap(), &mut result);
        return result;
    }
    for (key, base_samples) in base {
        match new.get(key) {
            Some(new_samples) => {
                compare_group(&format!("{key}/"), base_samples, new_samples, &mut result)
            }
            None => result.only_base.push(key.to_string()),
        }
    }
    let unmatched = new.keys().filter(|k| !base.contains_key(*k));
    result.only_new.extend(unmatched.map(|k| k.to_string()));
    result
}

fn compare_group(prefix: &str, base: &[Metrics], new: &[Metrics], out: &mut Comparison) {
    let (base, new) = (by_metric(base), by_metric(new));
    for (name, base_values) in &base {
        let Some(new_values) = new.get(name) else {
            out.only_base.push(format!("{prefix}{name}"));
            continue;
        };
        let (b, n) = (Summary::of(base_values), Summary::of(new_values));
        let (Some(b), Some(n)) = (b, n) else { continue };
        out.rows.push(Row {
            metric: format!("{prefix}{name}"),
            base: b,
            new: n,
            change_pct: stats::pct_change(b.mean, n.mean),
            changed: stats::lkp_changed(&b, &n),
            significant: stats::welch_significant(&b, &n),
        });
    }
    let unmatched = new.keys().filter(|k| !base.contains_key(*k));
    out.only_new
        .extend(unmatched.map(|k| format!("{prefix}{k}")));
}

/// Samples by metric name: a metric missing from some runs has fewer samples.
fn by_metric(samples: &[Metrics]) -> BTreeMap<&str, Vec<f64>> {
    let mut out: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for sample in samples {
        for (name, &value) in sample {
            out.entry(name).or_default().push(value);
        }
    }
    out
}

/// The table, right-aligned numbers, then a legend and any one-sided names.
pub fn render(comparison: &Comparison) -> String {
    let header = [
        "base",
        "±stddev%",
        "%change",
        "",
        "new",
        "±stddev%",
        "metric",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    for row in &comparison.rows {
        let marks = format!(
            "{}{}",
            if row.changed { "!" } else { "" },
            if row.significant { "*" } else { "" }
        );
        lines.push(vec![
            number(row.base.mean),
            percent_spread(&row.base),
            percent_change(row.change_pct),
            marks,
            number(row.new.mean),
            percent_spread(&row.new),
            row.metric.clone(),
        ]);
    }
    let mut widths = [0usize; 7];
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &lines {
        let mut text = String::new();
        for (column, (cell, width)) in line.iter().zip(widths).enumerate() {
            let pad = " ".repeat(width - cell.chars().count());
            match column {
                3 | 6 => text.push_str(&format!("{cell}{pad}")),
                _ => text.push_str(&format!("{pad}{cell}")),
            }
            text.push_str("  ");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out.push_str(
        "! changed: >= 3 samples a side and min..max ranges do not overlap (LKP); \
         * significant: Welch's t-test, two-sided, 95% (mmtests)\n",
    );
    for (side, names) in [
        ("base", &comparison.only_base),
        ("new", &comparison.only_new),
    ] {
        if !names.is_empty() {
            let _ = writeln!(out, "only in {side}: {}", names.join(", "));
        }
    }
    out
}

/// A value as LKP prints one: integers whole, large or tiny ones in e-notation,
/// others to 4 significant digits.
fn number(v: f64) -> String {
    let magnitude = v.abs();
    if v == 0.0 {
        "0".into()
    } else if !(1e-3..1e7).contains(&magnitude) {
        format!("{v:.3e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let decimals = (3 - magnitude.log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    }
}

fn percent_spread(s: &Summary) -> String {
    format!("±{:.0}%", s.stddev_pct())
}

fn percent_change(pct: f64) -> String {
    if pct == 0.0 {
        "0.0%".into()
    } else if pct.is_infinite() {
        format!("{}Inf%", if pct > 0.0 { "+" } else { "-" })
    } else {
        format!("{pct:+.1}%")
    }
}
