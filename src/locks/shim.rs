//! What the locks take from the outside world, in one place, so a model checker
//! can stand in for it.
//!
//! Normally these are std's atomics, a CPU spin hint, parking_lot_core's
//! park/unpark and a monotonic clock. Under `--cfg shuttle` (RUSTFLAGS), tests
//! built with `shuttle::check_*` see the same names backed by shuttle's atomics,
//! a spin loop yields to the checker instead of burning a bounded schedule
//! (loom's and shuttle's documented requirement for busy-waits), parking is the
//! model in `park_model` below and the clock is a model clock (see [`now_ns`]).
//!
//! The parking contract is parking_lot_core 0.10's, unchanged: one FIFO queue per
//! key; `validate`, `filter` and `callback` run under that queue's lock; a
//! thread removed from the queue is woken only after the lock is released.
//! loom and shuttle cannot see inside parking_lot_core (its futex parking blocks
//! the checker), hence the model (STACK.md, "Model checking").

#[cfg(not(shuttle))]
pub use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

#[cfg(shuttle)]
pub use shuttle::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

pub use parking_lot_core::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, UnparkResult,
    UnparkToken,
};

#[cfg(not(shuttle))]
pub use parking_lot_core::{park, unpark_filter, unpark_one};

#[cfg(shuttle)]
pub use park_model::{park, unpark_filter, unpark_one};

/// Tell the CPU (or the model checker) that this thread is busy-waiting.
#[inline(always)]
pub fn spin_hint() {
    #[cfg(not(shuttle))]
    std::hint::spin_loop();
    #[cfg(shuttle)]
    shuttle::thread::yield_now();
}

/// Nanoseconds on a monotonic clock (since the first call in this process).
///
/// Only slow paths read it (enqueue stamps, spin budgets, wait times): a fast
/// path never pays for a clock read.
#[cfg(not(shuttle))]
pub fn now_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    // u64 nanoseconds last 584 years.
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The model clock: every read advances it by [`MODEL_TICK_NS`].
///
/// A real clock would make a shuttle schedule unreplayable; a clock that never
/// moved would hide every time-based path (spin budgets, the rwsem's 4 ms
/// handoff). Advancing per read makes a waiter "old" after a few observations,
/// so the checker explores handoff, and it bounds every timed spin.
#[cfg(shuttle)]
pub fn now_ns() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    shuttle::lazy_static! {
        // Per execution: shuttle drops and re-creates lazy statics each run.
        static ref CLOCK: AtomicU64 = AtomicU64::new(0);
    }
    CLOCK.fetch_add(MODEL_TICK_NS, Ordering::Relaxed) + MODEL_TICK_NS
}

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

    /// As `parking_lot_core::unpark_one`.
    ///
    /// # Safety
    /// Same contract as parking_lot_core's.
    pub unsafe fn unpark_one(
        key: usize,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        let mut queue = QUEUE.lock().expect("model queue is never poisoned");
        let mut result = UnparkResult::default();
        let woken: Vec<Waiter> = match queue.iter().position(|w| w.key == key) {
            Some(i) => queue.remove(i).into_iter().collect(),
            None => Vec::new(),
        };
        result.unparked_threads = woken.len();
        result.have_more_threads = queue.iter().any(|w| w.key == key);
        let token = callback(result);
        deliver(queue, woken, token);
        result
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
        use super::super::{AtomicUsize, Ordering};
        use super::*;

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
                    let r = unsafe { unpark_one(KEY, |r| UnparkToken(10 + r.unparked_threads)) };
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
