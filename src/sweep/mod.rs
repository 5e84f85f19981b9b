//! Sweeps: run a model at every (x value, lock, repeat) point, keep each
//! finished point on disk at once, and hand the results to the report layer
//! for tables, plots and comparisons.
//!
//! Engine-agnostic by construction: a sweep calls a [`Runner`], and the native
//! engine, a simulator or a test's fake all plug in there.

mod merge;
mod params;
pub mod progress;
mod run;
mod runner;
mod shard;
pub mod store;
mod validate;

pub use merge::merge;
pub use params::{PointRun, SweepParams, SweepPoint, XAxis};
pub use run::{SweepOutcome, run};
pub use runner::Runner;
pub use shard::Shard;
pub use store::SweepResults;
