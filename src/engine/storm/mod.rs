//! The storm, engine-agnostic: the roles, the locked world they share, memory
//! pressure, the roster of tasks and the workers. An engine builds a
//! [`ctx::Ctx`], creates the workers of [`worker::plan`], calls
//! [`roles::op`] for each worker over and over, and hands their records to
//! [`crate::metrics::summary`]. The native engine does it on real threads.
//!
//! Calls into the real machine still left in this code (a simulated engine
//! must replace them): the clock (`Instant`) in `spin_for`, in direct
//! reclaim's timing and in the hold timestamps of `shared` (its epoch);
//! `std::thread::yield_now` in the walk hook's cond_resched and in the
//! roster's exit wait; `std::thread::sleep` in touch's `disk_us`.

pub mod ctx;
pub mod memory;
pub mod roles;
pub mod roster;
pub mod shared;
pub mod worker;
