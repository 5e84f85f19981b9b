//! The storm, engine-agnostic: the roles, the locked world they share, memory
//! pressure, the roster of tasks and the workers. An engine builds a
//! [`ctx::Ctx`], creates the workers of [`worker::plan`], calls
//! [`roles::op`] for each worker over and over, and hands their records to
//! [`crate::metrics::summary`]. The native engine does it on real threads,
//! the simulator on virtual CPUs.
//!
//! Nothing here calls the real machine: the clock, yields, sleeps and the
//! kernel work a step stands for (TLB flushes, syscall entries, fault
//! handling; [`costs`]) go through the lock's platform, so the simulator
//! charges them in virtual time and the native engine spends them for real.

pub mod costs;
pub mod ctx;
pub mod fork_probe;
pub mod memory;
pub mod roles;
pub mod roster;
pub mod shared;
pub mod time_buckets;
pub mod touch_probe;
pub mod walk_probe;
pub mod worker;

use std::time::Duration;

/// The monitor's window: a tenth of the run, between 20 ms and 1 s (virtual
/// time on the simulator). Not shorter: a CFS slice is a few ms (3 ms at 8
/// runnable tasks, sched_min_granularity), and a window shorter than a slice
/// would call a role that merely waits for its turn livelocked.
pub fn window_for(duration: Duration) -> Duration {
    (duration / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
}
