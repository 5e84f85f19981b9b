//! The simulator: the project's own locks and world on 1-4096 virtual CPUs,
//! deterministic for a seed.
//!
//! The locks are not re-coded for it: every kind runs unchanged through the
//! [`Sim`] platform, whose atomics go through a cache-line model
//! ([`cache`]), whose spin hints wait for the polled line to change, whose
//! parking blocks a simulated thread, and whose clock is virtual time. The
//! costs of contention (a ticket handoff growing with its spinners, a shared
//! reader count bouncing between readers) come out of that model, from the
//! per-distance transfer costs of a machine profile
//! ([`crate::model::machine`]); nothing in here knows which lock it runs.
//!
//! Threads are stackful coroutines ([`run`]) scheduled on virtual CPUs by a
//! model of CFS or EEVDF with the kernel's preemption models ([`sched`],
//! [`eevdf`]); work that is
//! not a lock-word access is charged in virtual time by the caller (the
//! profile's `[work]` costs). Events are ordered by (virtual time, sequence),
//! so a run depends only on its inputs and seed, never on the host.

pub mod cache;
pub mod eevdf;
pub mod events;
pub mod kernel;
pub mod noise;
pub mod platform;
pub mod run;
pub mod sched;
pub mod storm;
pub mod trace;

pub use platform::Sim;
pub use sched::Preempt;

/// The most CPUs a simulation may have (the ticket lock's 16-bit halves and
/// the CLI's thread limit are far above it; beyond it nothing was measured).
pub const MAX_CPUS: usize = 4096;

/// What a simulated machine is: its profile, how many CPUs, the preemption
/// model.
#[derive(Clone, Debug, PartialEq)]
pub struct SimSpec {
    pub cpus: usize,
    pub preempt: Preempt,
    pub machine: crate::model::machine::MachineProfile,
}
