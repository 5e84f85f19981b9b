//! Sweeps: run a model at every (x value, lock, repeat) point, keep each
//! finished point on disk at once, and hand the results to the report layer
//! for tables, plots and comparisons. What a sweep is and holds (its
//! parameters, points and results) is plain data in [`crate::results`].
//!
//! Engine-agnostic by construction: a sweep calls a [`Runner`], and the native
//! engine, a simulator or a test's fake all plug in there.

mod merge;
pub mod progress;
mod run;
mod runner;
pub mod store;
mod validate;

pub use merge::merge;
pub use run::{SweepOutcome, run};
pub use runner::Runner;
