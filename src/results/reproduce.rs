//! What `rmap-storm reproduce` found for one scenario: each claim of its
//! source beside the figure observed and the verdict, and the runs behind
//! them. Plain data: `reproduce` fills it in, `report` prints it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// The scenario file's stem.
    pub name: String,
    pub title: String,
    /// Where the claims come from.
    pub source: String,
    /// The kernel the runs stand for.
    pub era: String,
    /// "sim" or "native".
    pub engine: String,
    /// The machine profile's name.
    pub machine: String,
    /// Small sizes and short runs (`--quick`): the table's shape, not its figures.
    pub quick: bool,
    /// Each run's length, ms (virtual on the simulator).
    pub duration_ms: u64,
    pub rows: Vec<Row>,
    pub runs: Vec<RunLine>,
}

/// One claim and what was observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub what: String,
    /// The report figure compared (a dotted path of the run JSON).
    pub figure: String,
    pub run: String,
    /// The run it is compared with (the observed figure is then run / vs).
    pub vs: Option<String>,
    /// The source's own words.
    pub quote: Option<String>,
    pub expected: Expected,
    /// `figure` of `run`.
    pub run_value: f64,
    /// `figure` of `vs`.
    pub vs_value: Option<f64>,
    /// run / vs with `vs`, else run's figure; None for a ratio over a zero
    /// figure (JSON has no infinity; the verdict treats it as unbounded).
    pub observed: Option<f64>,
    pub verdict: Judgement,
}

/// What the source says, as the scenario encodes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Expected {
    /// "higher", "lower" or "same": run against vs.
    pub direction: Option<String>,
    /// The source's run / vs.
    pub ratio: Option<f64>,
    /// The source's figure for run.
    pub value: Option<f64>,
    /// A bound the source implies.
    pub at_least: Option<f64>,
    /// What "same" allows, and the margin a direction needs (fraction).
    pub tolerance: f64,
}

/// Whether the claim reproduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// Every check the claim makes held: its direction, its order of
    /// magnitude (within a factor of sqrt(10) ~ 3.2) and its bound.
    Reproduced,
    /// The direction held, the magnitude did not.
    DirectionOnly,
    NotReproduced,
    /// Nothing to check: a figure reported beside the others.
    Reported,
}

impl Judgement {
    pub fn label(self) -> &'static str {
        match self {
            Judgement::Reproduced => "reproduced",
            Judgement::DirectionOnly => "direction only",
            Judgement::NotReproduced => "not reproduced",
            Judgement::Reported => "reported",
        }
    }
}

/// One run of the scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLine {
    pub name: String,
    pub model: String,
    pub lock: String,
    /// Virtual CPUs, or this machine's online CPUs natively.
    pub cpus: u32,
    /// Threads of the scaled role.
    pub threads: u32,
    pub preempt: Option<String>,
    pub overrides: Vec<String>,
    /// The run's progress verdict (ok, starved ROLE, livelock).
    pub progress: String,
}
