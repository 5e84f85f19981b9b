//! What the locks take from the outside world, in one place, so a model checker
//! can stand in for it.
//!
//! Normally these are std's atomics and a CPU spin hint. Under `--cfg shuttle`
//! (RUSTFLAGS), tests built with `shuttle::check_*` see the same names backed by
//! shuttle's atomics, and a spin loop yields to the checker instead of burning a
//! bounded schedule (loom's and shuttle's documented requirement for busy-waits).
//! Parking for the sleeping kinds joins this module with the same contract.

#[cfg(not(shuttle))]
pub use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

#[cfg(shuttle)]
pub use shuttle::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

/// Tell the CPU (or the model checker) that this thread is busy-waiting.
#[inline(always)]
pub fn spin_hint() {
    #[cfg(not(shuttle))]
    std::hint::spin_loop();
    #[cfg(shuttle)]
    shuttle::thread::yield_now();
}
