//! [`Native`]: the platform of this process's own threads, and under
//! `--cfg shuttle` (RUSTFLAGS) the model checker's.
//!
//! Normally: std's atomics, a CPU spin hint, parking_lot_core's park/unpark
//! and a monotonic clock. Under shuttle, tests built with `shuttle::check_*`
//! see the same names backed by shuttle's atomics, a spin hint that yields to
//! the checker instead of burning a bounded schedule (loom's and shuttle's
//! documented requirement for busy-waits), the parking model in `park_model`
//! below and a model clock (see [`Native::now_ns`]). loom and shuttle cannot
//! see inside parking_lot_core (its futex parking blocks the checker), hence
//! the model.

use super::{FilterOp, ParkResult, ParkToken, Platform, UnparkResult, UnparkToken};

/// This process's threads (or, under `--cfg shuttle`, the model checker's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Native;

impl Platform for Native {
    #[cfg(not(shuttle))]
    type AtomicBool = std::sync::atomic::AtomicBool;
    #[cfg(not(shuttle))]
    type AtomicU32 = std::sync::atomic::AtomicU32;
    #[cfg(not(shuttle))]
    type AtomicUsize = std::sync::atomic::AtomicUsize;
    #[cfg(shuttle)]
    type AtomicBool = shuttle::sync::atomic::AtomicBool;
    #[cfg(shuttle)]
    type AtomicU32 = shuttle::sync::atomic::AtomicU32;
    #[cfg(shuttle)]
    type AtomicUsize = shuttle::sync::atomic::AtomicUsize;

    /// User space: a holder can be preempted, so long spins yield. Under
    /// shuttle every poll already yields to the checker.
    #[inline]
    fn spinners_yield() -> bool {
        cfg!(not(shuttle))
    }

    #[inline(always)]
    fn spin_hint() {
        #[cfg(not(shuttle))]
        std::hint::spin_loop();
        #[cfg(shuttle)]
        shuttle::thread::yield_now();
    }

    #[inline]
    fn yield_now() {
        #[cfg(not(shuttle))]
        std::thread::yield_now();
        #[cfg(shuttle)]
        shuttle::thread::yield_now();
    }

    /// Nanoseconds since the first call in this process; under shuttle the
    /// model clock, which every read advances by [`MODEL_TICK_NS`].
    ///
    /// A real clock would make a shuttle schedule unreplayable; a clock that
    /// never moved would hide every time-based path (spin budgets, the
    /// rwsem's 4 ms handoff). Advancing per read makes a waiter "old" after a
    /// few observations, so the checker explores handoff, and it bounds every
    /// timed spin.
    #[inline]
    fn now_ns() -> u64 {
        #[cfg(not(shuttle))]
        {
            use std::sync::OnceLock;
            use std::time::Instant;
            static START: OnceLock<Instant> = OnceLock::new();
            // u64 nanoseconds last 584 years.
            START.get_or_init(Instant::now).elapsed().as_nanos() as u64
        }
        #[cfg(shuttle)]
        {
            use std::sync::atomic::{AtomicU64, Ordering};
            shuttle::lazy_static! {
                // Per execution: shuttle drops and re-creates lazy statics each run.
                static ref CLOCK: AtomicU64 = AtomicU64::new(0);
            }
            CLOCK.fetch_add(MODEL_TICK_NS, Ordering::Relaxed) + MODEL_TICK_NS
        }
    }

    #[inline]
    fn udelay(ns: u64) {
        spin_for(ns);
    }

    #[inline]
    fn user_work(ns: u64) {
        spin_for(ns);
    }

    fn sleep(ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }

    /// membarrier(MEMBARRIER_CMD_GLOBAL): Linux implements it with
    /// synchronize_rcu() whenever more than one CPU is online
    /// (kernel/sched/membarrier.c), so the caller sleeps one real grace
    /// period of this machine (8-16 ms measured here, 2 vCPUs). Where the
    /// call is refused (seccomp, nohz_full, a kernel before 4.3) it sleeps
    /// [`FALLBACK_GP_NS`] instead. Under shuttle it yields to the checker.
    fn synchronize_rcu() {
        #[cfg(not(shuttle))]
        membarrier_global();
        #[cfg(shuttle)]
        shuttle::thread::yield_now();
    }

    fn ctx_switches() -> (u64, u64) {
        // SAFETY: getrusage only writes the struct we hand it; an all-zero
        // rusage is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_THREAD (Linux 2.6.26+) with a valid pointer cannot fail.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        debug_assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD) failed");
        (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
    }

    #[inline]
    unsafe fn park(key: usize, validate: impl FnOnce() -> bool, token: ParkToken) -> ParkResult {
        // SAFETY: forwarded caller contract.
        unsafe { imp::park(key, validate, || {}, |_, _| {}, token, None) }
    }

    #[inline]
    unsafe fn unpark_filter(
        key: usize,
        filter: impl FnMut(ParkToken) -> FilterOp,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        // SAFETY: forwarded caller contract.
        unsafe { imp::unpark_filter(key, filter, callback) }
    }
}

/// Busy-wait `ns` on the clock, as udelay: the thread keeps its CPU.
#[inline]
fn spin_for(ns: u64) {
    if ns == 0 {
        return;
    }
    let until = Native::now_ns() + ns;
    while Native::now_ns() < until {
        std::hint::spin_loop();
    }
}

/// What a grace period costs where membarrier is refused: 16 ms, the
/// middle of synchronize_rcu()'s 4-32 ms on a busy 2-socket server (Paul E.
/// McKenney, "Stupid RCU Tricks: How Read-Intensive is The Kernel's Use of
/// RCU?"), as the default machine profile's `work.rcu_gp_ns`.
#[cfg(not(shuttle))]
pub const FALLBACK_GP_NS: u64 = 16_000_000;

/// One host grace period through membarrier, or the fallback sleep.
#[cfg(not(shuttle))]
fn membarrier_global() {
    // include/uapi/linux/membarrier.h
    const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
    // SAFETY: membarrier takes two integers and touches no memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) };
    if rc != 0 {
        std::thread::sleep(std::time::Duration::from_nanos(FALLBACK_GP_NS));
    }
}

#[cfg(not(shuttle))]
use parking_lot_core as imp;

#[cfg(shuttle)]
use park_model as imp;

/// How far one read moves the model clock: 250 us, so a waiter reaches the
/// rwsem's 4 ms handoff age after 16 reads (a few slow paths), and one read
/// ends any spin budget (at most 25 us). With 1 ms nearly every waiter was
/// starved at its first wake and the woken-to-compete paths went unexplored.
#[cfg(shuttle)]
pub const MODEL_TICK_NS: u64 = 250_000;

/// parking_lot_core's park/unpark contract, modelled with shuttle primitives.
///
/// One shuttle Mutex guards a FIFO of every parked thread (one bucket for all
/// keys, which only serialises more than the real table does). `validate`,
/// `filter` and `callback` run while it is held; the unpark token is stored in
/// the waiter's slot under it; the thread is unparked after it is released. A
/// parked thread that nobody unparks blocks forever, so shuttle reports a lost
/// wake-up as a deadlock.
#[cfg(shuttle)]
mod park_model {
    use super::{FilterOp, ParkResult, ParkToken, UnparkResult, UnparkToken};
    use shuttle::sync::Mutex;
    use shuttle::thread::{self, Thread};
    use std::collections::VecDeque;
    use std::sync::Arc;
    use std::time::Instant;

    /// Where an unparker leaves the token for its parked thread.
    type Slot = Arc<std::sync::Mutex<Option<UnparkToken>>>;

    struct Waiter {
        key: usize,
        token: ParkToken,
        thread: Thread,
        slot: Slot,
    }

    shuttle::lazy_static! {
        static ref QUEUE: Mutex<VecDeque<Waiter>> = Mutex::new(VecDeque::new());
    }

    /// Deliver `token` to each removed waiter (under the queue lock), release
    /// the lock, then wake them: the real table's order.
    fn deliver(
        queue: shuttle::sync::MutexGuard<'_, VecDeque<Waiter>>,
        woken: Vec<Waiter>,
        token: UnparkToken,
    ) {
        for w in &woken {
            *w.slot.lock().expect("slot lock is never poisoned") = Some(token);
        }
        drop(queue);
        for w in woken {
            w.thread.unpark();
        }
    }

    /// As `parking_lot_core::park`. Shuttle does not model time, so, like
    /// shuttle's own `park_timeout`, a timeout never fires and `timed_out` is
    /// never called (the locks never pass one).
    ///
    /// # Safety
    /// Same contract as parking_lot_core's (the model itself has no unsafety).
    pub unsafe fn park(
        key: usize,
        validate: impl FnOnce() -> bool,
        before_sleep: impl FnOnce(),
        _timed_out: impl FnOnce(usize, bool),
        park_token: ParkToken,
        _timeout: Option<Instant>,
    ) -> ParkResult {
        let slot: Slot = Arc::default();
        {
            let mut queue = QUEUE.lock().expect("model queue is never poisoned");
            if !validate() {
                return ParkResult::Invalid;
            }
            queue.push_back(Waiter {
                key,
                token: park_token,
                thread: thread::current(),
                slot: slot.clone(),
            });
        }
        before_sleep();
        loop {
            if let Some(token) = slot.lock().expect("slot lock is never poisoned").take() {
                return ParkResult::Unparked(token);
            }
            // May return spuriously; the slot says whether we were unparked.
            thread::park();
        }
    }

    /// As `parking_lot_core::unpark_filter`.
    ///
    /// # Safety
    /// Same contract as parking_lot_core's.
    pub unsafe fn unpark_filter(
        key: usize,
        mut filter: impl FnMut(ParkToken) -> FilterOp,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        let mut queue = QUEUE.lock().expect("model queue is never poisoned");
        let mut result = UnparkResult::default();
        let mut woken = Vec::new();
        let mut i = 0;
        while i < queue.len() {
            if queue[i].key != key {
                i += 1;
                continue;
            }
            match filter(queue[i].token) {
                FilterOp::Unpark => woken.extend(queue.remove(i)),
                FilterOp::Skip => {
                    result.have_more_threads = true;
                    i += 1;
                }
                FilterOp::Stop => {
                    result.have_more_threads = true;
                    break;
                }
            }
        }
        result.unparked_threads = woken.len();
        let token = callback(result);
        deliver(queue, woken, token);
        result
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use shuttle::sync::atomic::AtomicUsize;
        use std::sync::atomic::Ordering;

        const KEY: usize = 0x1000;

        /// Park `n` threads on KEY, each with its index as token, staged so the
        /// queue order is the index order; returns their join handles.
        fn park_in_order(
            n: usize,
            queued: &Arc<AtomicUsize>,
        ) -> Vec<thread::JoinHandle<ParkResult>> {
            (0..n)
                .map(|i| {
                    let q = queued.clone();
                    let h = thread::spawn(move || unsafe {
                        park(
                            KEY,
                            || {
                                q.fetch_add(1, Ordering::SeqCst);
                                true
                            },
                            || {},
                            |_, _| {},
                            ParkToken(i),
                            None,
                        )
                    });
                    while queued.load(Ordering::SeqCst) <= i {
                        thread::yield_now();
                    }
                    h
                })
                .collect()
        }

        #[test]
        fn unpark_filter_wakes_the_picked_threads_in_fifo_order_with_the_token() {
            shuttle::check_random(
                || {
                    let queued = Arc::new(AtomicUsize::new(0));
                    let handles = park_in_order(3, &queued);
                    let mut seen = Vec::new();
                    let r = unsafe {
                        unpark_filter(
                            KEY,
                            |t| {
                                seen.push(t.0);
                                if t.0 == 1 {
                                    FilterOp::Skip
                                } else {
                                    FilterOp::Unpark
                                }
                            },
                            |r| UnparkToken(r.unparked_threads),
                        )
                    };
                    assert_eq!(seen, vec![0, 1, 2]);
                    assert_eq!((r.unparked_threads, r.have_more_threads), (2, true));
                    let r = unsafe {
                        unpark_filter(
                            KEY,
                            |_| FilterOp::Unpark,
                            |r| UnparkToken(10 + r.unparked_threads),
                        )
                    };
                    assert_eq!((r.unparked_threads, r.have_more_threads), (1, false));
                    let got: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
                    assert_eq!(
                        got,
                        vec![
                            ParkResult::Unparked(UnparkToken(2)),
                            ParkResult::Unparked(UnparkToken(11)),
                            ParkResult::Unparked(UnparkToken(2)),
                        ]
                    );
                },
                100,
            );
        }

        #[test]
        fn refused_validation_does_not_queue_and_stop_leaves_the_rest() {
            shuttle::check_random(
                || {
                    let r = unsafe { park(KEY, || false, || {}, |_, _| {}, ParkToken(0), None) };
                    assert_eq!(r, ParkResult::Invalid);
                    let queued = Arc::new(AtomicUsize::new(0));
                    let handles = park_in_order(2, &queued);
                    let r = unsafe { unpark_filter(KEY, |_| FilterOp::Stop, |_| UnparkToken(0)) };
                    assert_eq!((r.unparked_threads, r.have_more_threads), (0, true));
                    let r = unsafe { unpark_filter(KEY, |_| FilterOp::Unpark, |_| UnparkToken(7)) };
                    assert_eq!((r.unparked_threads, r.have_more_threads), (2, false));
                    for h in handles {
                        assert_eq!(h.join().unwrap(), ParkResult::Unparked(UnparkToken(7)));
                    }
                },
                100,
            );
        }
    }
}
