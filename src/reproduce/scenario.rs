//! A reproduction scenario (models/reproduce/*.toml): a source's claim as
//! runs to make and figures to compare.
//!
//! ```toml
//! title = "..."                       # one line: what runs
//! source = "seed 000: ..."            # where the claim comes from
//! era = "2.6.21 (2007): ..."          # the kernel the runs stand for
//! model = "models/mmap-mprotect.toml"
//! duration_ms = 1000                  # each run (virtual time on the simulator)
//! set = ["world.rmap=list"]           # model overrides for every run: only
//!                                     # what the source states
//!
//! [[runs]]                            # a group: one run, or one per lock x cpus
//! name = "voluntary"
//! lock = "rwsem-fifo"                 # or locks = ["tas", "rwlock"]
//! cpus = 1                            # or a list; simulator only
//! threads = 32                        # or "cpus": as many as CPUs
//! preempt = "voluntary"               # simulator only
//! model = "models/other.toml"         # instead of the scenario's
//! set = []                            # more overrides for this group
//!
//! [[expect]]                          # one table row
//! what = "context switches/s"
//! figure = "ctx_switches.total_per_s" # a figure of the run's report
//! run = "voluntary"
//! vs = "none"                         # optional: compare run / vs
//! vs_figure = "..."                   # optional: against another figure (of
//!                                     # vs, or of run itself)
//! quote = "160,000 context switches per second"
//! direction = "higher"                # higher | lower | same (needs vs)
//! ratio = 1.48                        # the source's run / vs (needs vs)
//! value = 160000.0                    # the source's figure (no vs)
//! at_least = 0.5                      # a bound the source implies (no vs)
//! tolerance = 0.05                    # what "same" and a direction allow
//!
//! [quick]                             # the --quick sizes (a test's seconds)
//! duration_ms = 20
//! set = ["world.tasks=1001"]
//! ```
//!
//! A group with several locks or a CPU list makes one run per pair, named
//! `GROUP/LOCK@CPUS`; a group of one of each is named `GROUP`. `--quick`
//! changes sizes and durations only, never the runs or the figures compared.

use crate::locks::LockKind;
use crate::model::{KeyError, key_error, parse, typed};
use crate::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The folder of the shipped scenarios.
pub const DIR: &str = "models/reproduce";

/// The longest run a scenario may ask for: an hour.
const MAX_DURATION_MS: u64 = 3_600_000;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub title: String,
    pub source: String,
    pub era: String,
    pub model: String,
    pub duration_ms: u64,
    #[serde(default)]
    pub set: Vec<String>,
    pub runs: Vec<RunGroup>,
    pub expect: Vec<Expect>,
    #[serde(default)]
    pub quick: Quick,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunGroup {
    pub name: String,
    pub lock: Option<String>,
    pub locks: Option<Vec<String>>,
    pub cpus: Option<OneOrMany>,
    pub threads: Option<Threads>,
    pub preempt: Option<String>,
    pub model: Option<String>,
    #[serde(default)]
    pub set: Vec<String>,
}

/// A number or a list of numbers.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(u32),
    Many(Vec<u32>),
}

/// A thread count, or "cpus": one thread of the scaled role per CPU.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Threads {
    Count(u32),
    PerCpu(String),
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Higher,
    Lower,
    Same,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub what: String,
    pub figure: String,
    pub run: String,
    pub vs: Option<String>,
    pub vs_figure: Option<String>,
    pub quote: Option<String>,
    pub direction: Option<Direction>,
    pub ratio: Option<f64>,
    pub value: Option<f64>,
    pub at_least: Option<f64>,
    pub tolerance: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub set: Vec<String>,
}

/// One run of a scenario, expanded from its group.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRun {
    pub name: String,
    pub model: String,
    pub lock: LockKind,
    /// None: the machine profile's CPUs (simulator) or this machine's.
    pub cpus: Option<u32>,
    /// Threads of the model's scaled role; None keeps the model's.
    pub threads: Option<u32>,
    pub preempt: Option<String>,
    /// The scenario's overrides, then the group's (then --quick's).
    pub set: Vec<String>,
}

impl Scenario {
    /// The scenario's name: its file stem.
    pub fn name(path: &Path) -> String {
        path.file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    }

    /// Every run, group by group, in file order; `quick` adds its overrides.
    pub fn plan(&self, quick: bool) -> Vec<PlannedRun> {
        let mut out = Vec::new();
        for g in &self.runs {
            let locks = g.kinds();
            let cpus = g.cpu_list();
            let grid = locks.len() > 1 || cpus.len() > 1;
            for &lock in &locks {
                for &c in &cpus {
                    let name = match (grid, c) {
                        (false, _) => g.name.clone(),
                        (true, Some(c)) => format!("{}/{lock}@{c}", g.name),
                        (true, None) => format!("{}/{lock}", g.name),
                    };
                    let mut set = self.set.clone();
                    set.extend(g.set.iter().cloned());
                    if quick {
                        set.extend(self.quick.set.iter().cloned());
                    }
                    out.push(PlannedRun {
                        name,
                        model: g.model.clone().unwrap_or_else(|| self.model.clone()),
                        lock,
                        cpus: c,
                        threads: match &g.threads {
                            Some(Threads::Count(n)) => Some(*n),
                            Some(Threads::PerCpu(_)) => c,
                            None => None,
                        },
                        preempt: g.preempt.clone(),
                        set,
                    });
                }
            }
        }
        out
    }

    /// Each run's length, ms.
    pub fn duration_ms(&self, quick: bool) -> u64 {
        match (quick, self.quick.duration_ms) {
            (true, Some(ms)) => ms,
            _ => self.duration_ms,
        }
    }
}

impl RunGroup {
    /// The group's kinds (checked by [`load`]).
    fn kinds(&self) -> Vec<LockKind> {
        let names = match (&self.lock, &self.locks) {
            (Some(one), None) => vec![one.clone()],
            (None, Some(many)) => many.clone(),
            _ => Vec::new(),
        };
        names
            .iter()
            .filter_map(|n| LockKind::parse(n).ok())
            .collect()
    }

    fn cpu_list(&self) -> Vec<Option<u32>> {
        match &self.cpus {
            None => vec![None],
            Some(OneOrMany::One(c)) => vec![Some(*c)],
            Some(OneOrMany::Many(list)) => list.iter().map(|&c| Some(c)).collect(),
        }
    }
}

/// Every scenario file of `dir`, by name.
pub fn list(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Load and check the scenario at `path`. The runs' models and overrides
/// are checked by whoever resolves the runs, before any runs.
pub fn load(path: &Path) -> Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    let table = parse(path, &text)?;
    let s: Scenario = typed(path, table, allowed)?;
    s.validate().map_err(|e| key_error(path, e))?;
    Ok(s)
}

fn allowed(key: &str) -> String {
    match key.rsplit('.').next().unwrap_or(key) {
        "direction" => "higher, lower, same".into(),
        "threads" => "a count of at least 1, or \"cpus\"".into(),
        "cpus" => format!("1..={} or a list of them", crate::engine::sim::MAX_CPUS),
        _ => "title, source, era, model, duration_ms, set, [[runs]], [[expect]], [quick]".into(),
    }
}

fn bad(key: impl Into<String>, message: impl Into<String>, allowed: &str) -> KeyError {
    KeyError {
        key: key.into(),
        message: message.into(),
        allowed: allowed.into(),
    }
}

impl Scenario {
    fn validate(&self) -> std::result::Result<(), KeyError> {
        let range = 1..=MAX_DURATION_MS;
        for (key, ms) in [
            ("duration_ms", Some(self.duration_ms)),
            ("quick.duration_ms", self.quick.duration_ms),
        ] {
            if let Some(ms) = ms.filter(|ms| !range.contains(ms)) {
                return Err(bad(key, format!("{ms} is out of range"), "1..=3600000 ms"));
            }
        }
        if self.runs.is_empty() {
            return Err(bad("runs", "no run", "at least one [[runs]] group"));
        }
        for (i, g) in self.runs.iter().enumerate() {
            g.validate(&format!("runs[{i}]"))?;
        }
        let names: BTreeSet<String> = self.plan(false).into_iter().map(|r| r.name).collect();
        if names.len() != self.plan(false).len() {
            return Err(bad("runs", "two runs share a name", "distinct group names"));
        }
        if self.expect.is_empty() {
            return Err(bad(
                "expect",
                "nothing to compare",
                "at least one [[expect]]",
            ));
        }
        for (i, e) in self.expect.iter().enumerate() {
            e.validate(&format!("expect[{i}]"), &names)?;
        }
        Ok(())
    }
}

impl RunGroup {
    fn validate(&self, at: &str) -> std::result::Result<(), KeyError> {
        match (&self.lock, &self.locks) {
            (Some(_), None) => {}
            (None, Some(many)) if !many.is_empty() => {}
            _ => {
                return Err(bad(
                    format!("{at}.lock"),
                    "give lock or locks (one of them)",
                    "lock = \"KIND\" or locks = [\"KIND\", ...]",
                ));
            }
        }
        for name in self.lock.iter().chain(self.locks.iter().flatten()) {
            LockKind::parse(name).map_err(|_| {
                let kinds = LockKind::ALL.map(LockKind::name).join(", ");
                bad(
                    format!("{at}.lock"),
                    format!("unknown kind '{name}'"),
                    &kinds,
                )
            })?;
        }
        let max = crate::engine::sim::MAX_CPUS as u32;
        if let Some(c) = self
            .cpu_list()
            .into_iter()
            .flatten()
            .find(|c| !(1..=max).contains(c))
        {
            return Err(bad(
                format!("{at}.cpus"),
                format!("{c} is out of range"),
                &allowed("cpus"),
            ));
        }
        match &self.threads {
            Some(Threads::Count(0)) => {
                return Err(bad(
                    format!("{at}.threads"),
                    "0 threads",
                    &allowed("threads"),
                ));
            }
            Some(Threads::PerCpu(s)) if s != "cpus" || self.cpus.is_none() => {
                return Err(bad(
                    format!("{at}.threads"),
                    format!("'{s}' needs cpus in the group"),
                    &allowed("threads"),
                ));
            }
            _ => {}
        }
        if let Some(p) = &self.preempt
            && !["none", "voluntary", "full"].contains(&p.as_str())
        {
            return Err(bad(
                format!("{at}.preempt"),
                format!("'{p}'"),
                "none, voluntary, full",
            ));
        }
        Ok(())
    }
}

impl Expect {
    /// The run and figure `run`'s figure is compared with, if any.
    pub fn comparison(&self) -> Option<(&str, &str)> {
        if self.vs.is_none() && self.vs_figure.is_none() {
            return None;
        }
        Some((
            self.vs.as_deref().unwrap_or(&self.run),
            self.vs_figure.as_deref().unwrap_or(&self.figure),
        ))
    }

    fn validate(&self, at: &str, runs: &BTreeSet<String>) -> std::result::Result<(), KeyError> {
        let known = || runs.iter().cloned().collect::<Vec<_>>().join(", ");
        for (key, run) in [("run", Some(&self.run)), ("vs", self.vs.as_ref())] {
            if let Some(run) = run.filter(|r| !runs.contains(*r)) {
                return Err(bad(
                    format!("{at}.{key}"),
                    format!("no run '{run}'"),
                    &known(),
                ));
            }
        }
        let relative = self.comparison().is_some();
        for (key, set, needs_vs) in [
            ("direction", self.direction.is_some(), true),
            ("ratio", self.ratio.is_some(), true),
            ("value", self.value.is_some(), false),
            ("at_least", self.at_least.is_some(), false),
        ] {
            if set && needs_vs != relative {
                let why = if needs_vs {
                    "needs vs or vs_figure"
                } else {
                    "checks one figure: no vs"
                };
                return Err(bad(
                    format!("{at}.{key}"),
                    why,
                    "direction and ratio with vs or vs_figure; value and at_least without",
                ));
            }
        }
        for (key, v) in [
            ("ratio", self.ratio),
            ("value", self.value),
            ("tolerance", self.tolerance),
        ] {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v <= 0.0) {
                return Err(bad(
                    format!("{at}.{key}"),
                    format!("{v}"),
                    "a finite number above 0",
                ));
            }
        }
        for (key, fig) in [
            ("figure", Some(&self.figure)),
            ("vs_figure", self.vs_figure.as_ref()),
        ] {
            if let Some(fig) = fig {
                crate::results::figure::check(fig)
                    .map_err(|allowed| bad(format!("{at}.{key}"), format!("'{fig}'"), &allowed))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> std::result::Result<Scenario, String> {
        let text = format!(
            "title = \"t\"\nsource = \"s\"\nera = \"e\"\nmodel = \"models/synchro.toml\"\nduration_ms = 10\n{extra}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, text).unwrap();
        load(&path).map_err(|e| e.to_string())
    }

    const RUNS: &str = "[[runs]]\nname = \"g\"\nlocks = [\"spinlock\", \"rwsem\"]\ncpus = [1, 4]\nthreads = \"cpus\"\n";

    #[test]
    fn a_grid_names_each_run_by_lock_and_cpus() {
        let s = scenario(&format!(
            "{RUNS}[[expect]]\nwhat = \"w\"\nfigure = \"roles.monitor.ops_per_s\"\nrun = \"g/spinlock@4\"\nvs = \"g/rwsem@4\"\ndirection = \"lower\"\n"
        ))
        .unwrap();
        let plan = s.plan(false);
        let names: Vec<_> = plan.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["g/spinlock@1", "g/spinlock@4", "g/rwsem@1", "g/rwsem@4"]
        );
        assert_eq!(plan[1].threads, Some(4), "threads = cpus");
    }

    #[test]
    fn bad_scenarios_name_the_key() {
        let expect = "[[expect]]\nwhat = \"w\"\nfigure = \"roles.monitor.ops_per_s\"\nrun = \"g/spinlock@1\"\n";
        for (extra, want) in [
            (
                format!("{RUNS}{expect}vs = \"nope\"\n"),
                "expect[0].vs: no run 'nope'",
            ),
            (
                format!("{RUNS}{expect}direction = \"up\"\n"),
                "expect[0].direction",
            ),
            (
                format!("{RUNS}{expect}ratio = 2.0\n"),
                "expect[0].ratio: needs vs",
            ),
            (
                format!(
                    "{RUNS}[[expect]]\nwhat = \"w\"\nfigure = \"roles.nobody.ops_per_s\"\nrun = \"g/spinlock@1\"\n"
                ),
                "expect[0].figure",
            ),
            (
                format!("[[runs]]\nname = \"g\"\nlock = \"bkl\"\n{expect}"),
                "runs[0].lock",
            ),
            (
                format!("[[runs]]\nname = \"g\"\nlock = \"spinlock\"\ncpus = 0\n{expect}"),
                "runs[0].cpus: 0 is out of range",
            ),
            (
                format!(
                    "[[runs]]\nname = \"g\"\nlock = \"spinlock\"\nthreads = \"cpus\"\n{expect}"
                ),
                "runs[0].threads",
            ),
            (format!("{RUNS}{expect}bogus = 1\n"), "bogus"),
        ] {
            let e = scenario(&extra).unwrap_err();
            assert!(e.contains(want), "want {want:?} in {e}");
        }
    }
}
