//! What a lock takes from the machine it runs on, in one trait every kind is
//! generic over: atomic words, a busy-wait hint, parking, a clock, and the
//! kernel's preemption points.
//!
//! Two platforms implement it, both monomorphised into one binary:
//! - [`Native`]: this process's threads. Real atomics, `spin_loop`,
//!   parking_lot_core's park/unpark, a monotonic clock; the preemption hooks
//!   do nothing (user space cannot disable preemption). Under `--cfg shuttle`
//!   (RUSTFLAGS) the same names are backed by the model checker: its atomics,
//!   a spin hint that yields to it, a parking model with parking_lot_core's
//!   contract and a model clock (see `native.rs`).
//! - the simulator's (src/engine/sim): every access to a lock word goes
//!   through a cache-line model on virtual CPUs, a spin hint waits for the
//!   line it polls to change, parking blocks a simulated thread, the clock is
//!   virtual time and the preemption hooks are the kernel's preemption model.
//!
//! The parking contract is parking_lot_core 0.10's: one FIFO queue per key;
//! `validate` and `filter`/`callback` run under that queue's lock; a thread
//! removed from the queue is woken only after the lock is released. The locks
//! pass no park timeout, so the trait has none.

mod atomic;
mod native;

pub use atomic::{AtomicFlag, AtomicInt};
pub use native::Native;
pub use parking_lot_core::{FilterOp, ParkResult, ParkToken, UnparkResult, UnparkToken};
pub use std::sync::atomic::Ordering;

/// Spin iterations between clock reads in a time-bounded spin, and between
/// a spinning waiter's clock reads once past its first few polls. The
/// kernel's rwsem_optimistic_spin checks its time threshold "once every 16
/// iterations" because reading the clock costs; it costs natively (vDSO
/// clock_gettime, tens of ns) and in the simulator (the profile's
/// `work.clock_ns`), so both platforms read this rarely.
pub const SPINS_PER_CLOCK_READ: u64 = 16;

/// A machine the locks can run on. See the module doc.
///
/// Every method is an associated function: the platform is the execution
/// context of the calling thread (a real thread, a model-checker task, a
/// simulated thread on a virtual CPU), not a value.
pub trait Platform: Sized + Send + Sync + 'static {
    /// An atomic `bool` (an MCS node's handoff flag).
    type AtomicBool: AtomicFlag + std::fmt::Debug;
    /// An atomic `u32` (ticket and rwlock_t words, qrwlock's count).
    type AtomicU32: AtomicInt<u32> + std::fmt::Debug;
    /// An atomic `usize` (rw_semaphore counts, MCS tails, reader slots).
    type AtomicUsize: AtomicInt<usize> + std::fmt::Debug;

    /// Whether a spinning waiter must give its CPU away after a while. True
    /// in user space, where the holder (or the next ticket) can be preempted
    /// and pure spinning would burn its time slices; false where spinners
    /// run, as in the kernel, with preemption disabled (see
    /// `spin_wait::SPIN_POLLS_BEFORE_YIELD`). A function, not a constant: the
    /// simulator's threads are kernel threads or, under `--preempt user`,
    /// user-space ones.
    fn spinners_yield() -> bool;

    /// cpu_relax(): one iteration of a busy-wait that polls what the caller
    /// just read. The simulator waits here until one of the lines the caller
    /// read since its last spin hint is written.
    fn spin_hint();

    /// One iteration of a busy-wait that will give up at `deadline_ns`
    /// ([`Platform::now_ns`]): as [`Platform::spin_hint`], but a platform
    /// that waits for a line to change wakes at the deadline at the latest.
    #[inline(always)]
    fn spin_hint_until(deadline_ns: u64) {
        let _ = deadline_ns;
        Self::spin_hint();
    }

    /// sched_yield(): give the CPU to another runnable thread.
    fn yield_now();

    /// Nanoseconds on a monotonic clock. Only slow paths read it (enqueue
    /// stamps, spin budgets, wait times): a fast path never does.
    fn now_ns() -> u64;

    /// preempt_disable(): the caller spins on, or holds, a spinning lock.
    /// Nests. The kernel never preempts such a section; neither does the
    /// simulator. Natively nothing can be done.
    #[inline(always)]
    fn preempt_disable() {}

    /// preempt_enable(): end of a [`Platform::preempt_disable`] section; with
    /// full preemption, a preemption point.
    #[inline(always)]
    fn preempt_enable() {}

    /// might_sleep(): the entry of a sleeping lock's acquisition; with
    /// voluntary preemption, a point where the caller yields its CPU if
    /// another task should run (cond_resched).
    #[inline(always)]
    fn might_sleep() {}

    /// The CPU the caller runs on, if the platform knows it (per-CPU
    /// counters); natively unknown.
    #[inline(always)]
    fn cpu() -> Option<usize> {
        None
    }

    /// udelay(): `ns` of busy work the caller does not do for real (a
    /// locktorture hold, a TLB-flush IPI the model only stands for): natively
    /// a spin on the clock; simulated, kernel time on the thread's CPU.
    fn udelay(ns: u64);

    /// `ns` of user-mode work between operations (think time): natively a
    /// spin on the clock; simulated, user time, preemptible at any moment.
    fn user_work(ns: u64);

    /// `ns` of kernel work the caller did for real just now (a walk's visit
    /// of a vma, a fork's copy of a PTE): nothing natively, where it took the
    /// time it took; simulated, the time the machine profile says it takes.
    #[inline(always)]
    fn charge(ns: u64) {
        let _ = ns;
    }

    /// As [`Platform::charge`], for user-mode work (an access to a present
    /// page): preemptible at any moment on a platform that preempts.
    #[inline(always)]
    fn charge_user(ns: u64) {
        let _ = ns;
    }

    /// Whether [`Platform::charge`] spends time (the simulator) or nothing
    /// (real threads, which did the work): lets a caller skip preparing a
    /// charge it would throw away, on a hot path.
    const CHARGES: bool = false;

    /// Sleep `ns` off the CPU (a fault waiting for the disk).
    fn sleep(ns: u64);

    /// cond_resched(): a voluntary preemption point in kernel code.
    #[inline(always)]
    fn cond_resched() {}

    /// The return to user space after an operation (exit_to_user_mode): a
    /// preemption point under every preemption model.
    #[inline(always)]
    fn return_to_user() {}

    /// synchronize_rcu(): wait, off the CPU, for one RCU grace period (every
    /// CPU has passed a quiescent state). percpu-rwsem's writer pays one in
    /// rcu_sync_enter before readers are off their fast path. Natively it is
    /// the host kernel's own grace period, membarrier(MEMBARRIER_CMD_GLOBAL)
    /// (see `native.rs`); simulated, the thread sleeps the machine profile's
    /// `work.rcu_gp_ns`.
    fn synchronize_rcu();

    /// The calling thread's context switches so far: (voluntary,
    /// involuntary), as getrusage(RUSAGE_THREAD) counts them.
    fn ctx_switches() -> (u64, u64);

    /// parking_lot_core::park without a timeout: queue the caller on `key`
    /// if `validate` (run under the queue lock) agrees, then sleep until
    /// unparked.
    ///
    /// # Safety
    /// parking_lot_core's contract: `validate` must not panic or call into
    /// the parking functions; `key` is not used by unrelated code.
    unsafe fn park(key: usize, validate: impl FnOnce() -> bool, token: ParkToken) -> ParkResult;

    /// parking_lot_core::unpark_filter.
    ///
    /// # Safety
    /// As for [`Platform::park`]; `filter` and `callback` must not panic.
    unsafe fn unpark_filter(
        key: usize,
        filter: impl FnMut(ParkToken) -> FilterOp,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult;
}
