//! Engine-agnostic statistics: what a run's raw per-thread figures become in a
//! report.
//!
//! Every function here takes plain inputs (op counts, histograms, getrusage
//! snapshots, lock counters) and returns the [`crate::results`] types, so the native
//! engine, the simulator and `torture` compute each figure one way, and each
//! statistic is unit-tested on fixed inputs (locktorture's Max/Min once summed
//! the wrong counter for years: kernel commit 80c503e0e68f, 2020).

pub mod counters;
pub mod ctx;
pub mod fairness;
pub mod latency;
pub mod lock;
pub mod overlap;
pub mod record;
pub mod summary;
pub mod verdict;

pub use counters::PerThread;
pub use ctx::ThreadCtx;
pub use fairness::{fairness, jain, starved_mark};
pub use latency::{histogram, latency, merge, record};
pub use lock::{class_report, contended_pct, mean_wake_batch, wait_share};
