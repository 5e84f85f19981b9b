//! `torture`: a locktorture / synchro-test style stress of ONE lock.
//!
//! Threads of four roles hammer one lock of the chosen kind until a stop flag:
//! readers (down_read), writers (down_write), downgraders (down_write then
//! downgrade_write, as synchro-test's `dg` threads) and critical readers
//! (down_read_critical, seed 002). Each holds the lock for `load` (busy-waiting
//! like udelay), releases, optionally yields (synchro-test's `do_sched`), and
//! waits `interval` before the next acquisition.
//!
//! On every acquisition, and again before every release, the holder checks
//! separate shared counts of readers and writers inside ([`check`]), as
//! synchro-test's VALIDATE_OPERATORS and locktorture's lock_is_write_held do;
//! any violation is counted as a failure of that thread. A deliberately broken
//! lock (the test-only `busted` module, after locktorture's lock_busted) proves
//! the check catches a broken lock.
//!
//! Layers: [`config`] is what to run (built and validated by `cli::torture`),
//! [`worker`] is one thread's loop, generic over [`crate::locks::RawRwLock`]
//! and so over its platform; [`engine`] runs the threads on this machine and
//! [`sim`] on the simulator's virtual CPUs (with only writers and
//! exponential times it is the pure lock loop of the analytical models);
//! [`print`](mod@print) formats the outcome in locktorture's and
//! synchro-test's formats.

pub mod check;
pub mod config;
pub mod engine;
pub mod gate;
pub mod print;
pub mod sim;
pub mod worker;

#[cfg(test)]
mod busted;
#[cfg(test)]
mod hung;

pub use config::{Config, Engine, Role};
pub use engine::{End, Outcome, ThreadOutcome, run, run_with};
