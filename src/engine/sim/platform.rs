//! [`Sim`]: the platform of a simulated thread. The locks' atomics, spin
//! hints, parking, clock and preemption points reach the [`Kernel`] of the
//! simulation running on this OS thread.
//!
//! The event loop (`run.rs`) installs its kernel for the duration of a run
//! ([`installed`]); each simulated thread is a coroutine, and a platform call
//! that must wait suspends the coroutine ([`suspend`]) after the kernel has
//! arranged its resumption. Outside a run (a world being built or dropped)
//! every call applies at once and costs nothing, so locks can be created and
//! destroyed anywhere; only parking needs a run.
//!
//! Line identity: an atomic's address names its cache line. The locks keep
//! one hot word per line or pad (CachePadded), so modelling each word as its
//! own line loses little (the sleeping kinds' state, parked count and osq
//! tail do share a line natively; modelled so, with the bucket apart, the
//! two synchro rows tried moved within their seeds' spread: docs/sim.md).
//! Two lines have no atomic: the parking queue's bucket, named by the
//! queue's key (the address of its parked count, so here the two are one
//! line), and each thread's parking_lot `ThreadData` (`thread_data`). A
//! word made where another lived (a queue node on the same stack frame, as
//! the kernel's per-CPU qnode is the same memory each time) is the same
//! line, with its cache state, as on a real machine. A heap object may
//! land where a freed one was, so a run's figures can depend on the
//! allocator (see docs/sim.md, "What it does not model").

use super::cache::{Access, LineId};
use super::kernel::{Go, Kernel, Suspend};
use super::sched::{Point, Preempt};
use crate::locks::platform::{
    AtomicFlag, AtomicInt, FilterOp, ParkResult, ParkToken, Platform, UnparkResult, UnparkToken,
};
use crate::locks::trace;
use corosensei::Yielder;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

thread_local! {
    /// The kernel of the run on this OS thread, while one runs.
    static KERNEL: Cell<*const RefCell<Kernel>> = const { Cell::new(std::ptr::null()) };
    /// The running coroutine's yielder.
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
}

/// Run `f` with `kernel` as this OS thread's simulation, its virtual clock
/// stamping the lock trace.
pub fn installed<R>(kernel: &RefCell<Kernel>, f: impl FnOnce() -> R) -> R {
    struct Restore(*const RefCell<Kernel>);
    impl Drop for Restore {
        fn drop(&mut self) {
            KERNEL.with(|k| k.set(self.0));
        }
    }
    let _restore = Restore(KERNEL.with(|k| k.replace(kernel)));
    trace::with_clock(trace_clock, f)
}

/// The lock trace's clock in a simulation: the virtual time (ns) and the
/// running thread's CPU, read without charging the thread.
fn trace_clock() -> (u64, u32) {
    with_kernel(|k| (k.now() / 1_000, k.cpu() as u32)).unwrap_or_default()
}

/// Called first thing in a coroutine's body with its yielder.
pub fn enter_coroutine(yielder: &Yielder<(), ()>) {
    YIELDER.with(|y| y.set(yielder));
}

/// Apply `f` to the running simulation's kernel; None outside a run.
#[inline]
pub fn with_kernel<R>(f: impl FnOnce(&mut Kernel) -> R) -> Option<R> {
    let k = KERNEL.with(Cell::get);
    if k.is_null() {
        return None;
    }
    // SAFETY: `installed` set it from a reference that outlives the run, on
    // this OS thread; no borrow of it is held across a suspension.
    Some(f(&mut unsafe { &*k }.borrow_mut()))
}

/// Suspend the running coroutine until the event loop resumes it.
fn suspend() {
    let y = YIELDER.with(Cell::get);
    assert!(!y.is_null(), "a simulated wait outside a simulated thread");
    // SAFETY: `enter_coroutine` set it from the yielder of the coroutine that
    // is running now (each coroutine restores its own after every resume),
    // and that yielder lives as long as the coroutine.
    unsafe { &*y }.suspend(());
    YIELDER.with(|cell| cell.set(y));
}

/// Apply `f` and suspend if it says so.
#[inline]
fn step(f: impl FnOnce(&mut Kernel) -> Suspend) {
    if with_kernel(f) == Some(Suspend::Yes) {
        suspend();
    }
}

/// Before one access to a lock word: in time order, paid for; a miss waits
/// for the line to arrive. The value is taken or changed after this
/// returns, then [`accessed`] is called with what this returned (whether the
/// line moved).
#[inline]
fn access(line: LineId, kind: Access) -> bool {
    loop {
        match with_kernel(|k| k.access(line, kind)) {
            None | Some(Go::Hit) => return false,
            Some(Go::Turn) => suspend(),
            Some(Go::Miss) => {
                suspend();
                return true;
            }
        }
    }
}

/// After an access, with its value taken or changed: the line serves its
/// next move, a write wakes the line's spinners; under full preemption, a
/// preemption point.
#[inline]
fn accessed(kind: Access, moved: bool) {
    step(|k| {
        k.accessed(kind, moved);
        k.preempt_point(Point::Anywhere)
    });
}

/// `ns` of kernel work (`user` false) or user work, interruptible where the
/// preemption model allows.
fn work(ns: u64, user: bool) {
    work_ps(ns * 1_000, user);
}

/// A busy-wait of `ns` (udelay, think time): the work, and what the
/// machine's busy-waits take beyond their length (a spin on the clock ends
/// at the first read past its end). Nothing for 0 ns, as natively.
fn busy_wait(ns: u64, user: bool) {
    if ns > 0 {
        let extra = with_kernel(|k| k.costs.busy_wait_extra).unwrap_or(0);
        work_ps(ns * 1_000 + extra, user);
    }
}

/// As [`work`], in picoseconds.
fn work_ps(ps: u64, user: bool) {
    // The work and what interruptions of its CPU take from it.
    let Some(mut left) = with_kernel(|k| k.interrupted(ps)) else {
        return;
    };
    while left > 0 {
        let Some(end) = with_kernel(|k| k.now() + left) else {
            return;
        };
        if with_kernel(|k| k.teardown) == Some(true) {
            return;
        }
        with_kernel(|k| k.work(left, user));
        suspend();
        left = end.saturating_sub(with_kernel(|k| k.now()).unwrap_or(end));
        // Work cut short returns from the interrupt that cut it. User work
        // run to its end goes on in user space, which under `--preempt
        // user` meets a reschedule only by interrupt; the kernel models
        // keep their check there.
        let point = if user && (left > 0 || !user_space_threads()) {
            Point::UserReturn
        } else {
            Point::Anywhere
        };
        step(|k| k.preempt_point(point));
        // Preempted: the rest of the work resumes where the thread runs next.
    }
}

/// Whether the simulated threads are user-space threads (`--preempt user`),
/// not kernel code.
fn user_space_threads() -> bool {
    with_kernel(|k| k.preempt == Preempt::User).unwrap_or(false)
}

/// A preemption point of kind `point`.
fn preempt_point(point: Point) {
    step(|k| k.preempt_point(point));
}

/// The platform of a simulated thread; see the module doc.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sim;

impl Platform for Sim {
    type AtomicBool = SimAtomic<AtomicBool>;
    type AtomicU32 = SimAtomic<AtomicU32>;
    type AtomicUsize = SimAtomic<AtomicUsize>;

    /// Spinners run with preemption disabled, as in the kernel; under
    /// `--preempt user` they are user-space threads and yield as natively.
    fn spinners_yield() -> bool {
        user_space_threads()
    }

    #[inline]
    fn spin_hint() {
        step(Kernel::spin_hint);
    }

    #[inline]
    fn spin_hint_until(deadline_ns: u64) {
        step(|k| k.spin(Some(deadline_ns.saturating_mul(1_000))));
    }

    /// sched_yield(): the call itself (`sched.yield_ns`, switch or not),
    /// then to the back of the run queue if another thread waits there.
    fn yield_now() {
        let call = with_kernel(|k| k.costs.sched.sched_yield).unwrap_or(0);
        work_ps(call, false);
        step(Kernel::take_turn);
        step(Kernel::yield_now);
    }

    /// The virtual time, then the read's cost (`work.clock_ns`): natively
    /// every reading of the clock (a spin's wait, a hold's stamps, an
    /// operation's latency) takes CPU time from the thread, 29 ns of vDSO
    /// clock_gettime on the test machine, and in a spinning waiter's loop it
    /// delays seeing the release. The stamp is taken before the cost, so of
    /// an interval's two readings one is inside it, as on average natively.
    #[inline]
    fn now_ns() -> u64 {
        let Some((now, cost)) = with_kernel(|k| (k.now(), k.costs.clock)) else {
            return 0;
        };
        if cost > 0 {
            work_ps(cost, false);
        }
        now / 1_000
    }

    #[inline]
    fn preempt_disable() {
        with_kernel(Kernel::preempt_disable);
    }

    #[inline]
    fn preempt_enable() {
        step(|k| {
            k.preempt_enable();
            k.preempt_point(Point::Anywhere)
        });
    }

    #[inline]
    fn might_sleep() {
        preempt_point(Point::MightSleep);
    }

    #[inline]
    fn cpu() -> Option<usize> {
        with_kernel(|k| k.cpu())
    }

    fn udelay(ns: u64) {
        busy_wait(ns, false);
    }

    fn user_work(ns: u64) {
        busy_wait(ns, true);
    }

    fn charge(ns: u64) {
        work(ns, false);
    }

    fn charge_user(ns: u64) {
        work(ns, true);
    }

    /// Virtual time: the engine's real work took none, the profile says how much.
    const CHARGES: bool = true;

    fn sleep(ns: u64) {
        step(Kernel::take_turn);
        step(|k| k.sleep(ns * 1_000));
    }

    /// The thread sleeps one grace period of the machine profile
    /// (`work.rcu_gp_ns`): synchronize_rcu() blocks its caller.
    fn synchronize_rcu() {
        let gp = with_kernel(|k| k.costs.rcu_gp).unwrap_or(0);
        step(Kernel::take_turn);
        step(|k| k.sleep(gp));
    }

    fn cond_resched() {
        preempt_point(Point::CondResched);
    }

    fn return_to_user() {
        preempt_point(Point::UserReturn);
    }

    fn ctx_switches() -> (u64, u64) {
        with_kernel(|k| {
            let t = &k.threads()[k.current as usize];
            (t.nvcsw, t.nivcsw)
        })
        .unwrap_or((0, 0))
    }

    unsafe fn park(key: usize, validate: impl FnOnce() -> bool, token: ParkToken) -> ParkResult {
        lock_bucket(key);
        parking_code();
        if !validate() {
            unlock_bucket(key);
            return ParkResult::Invalid;
        }
        let me = with_kernel(|k| k.current).expect("parking outside a simulation");
        touch(thread_data(me), Access::Write);
        with_kernel(|k| k.enqueue_parked(key, token)).expect("parking outside a simulation");
        unlock_bucket(key);
        loop {
            match with_kernel(Kernel::block_parked).expect("parking outside a simulation") {
                Ok(token) => {
                    touch(thread_data(me), Access::Read);
                    return ParkResult::Unparked(token);
                }
                Err(Suspend::Yes) => suspend(),
                Err(Suspend::No) => {}
            }
        }
    }

    unsafe fn unpark_filter(
        key: usize,
        mut filter: impl FnMut(ParkToken) -> FilterOp,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        lock_bucket(key);
        parking_code();
        // Walked in place, FIFO; what stays keeps its order.
        let mut queue = with_kernel(|k| k.take_queue(key)).unwrap_or_default();
        let mut woken = Vec::new();
        let mut stopped = false;
        queue.retain(|&(tid, token)| {
            if stopped {
                return true;
            }
            touch(thread_data(tid), Access::Read);
            match filter(token) {
                FilterOp::Unpark => {
                    touch(thread_data(tid), Access::Write);
                    woken.push(tid);
                    false
                }
                FilterOp::Skip => true,
                FilterOp::Stop => {
                    stopped = true;
                    true
                }
            }
        });
        let mut result = UnparkResult::default();
        result.unparked_threads = woken.len();
        result.have_more_threads = !queue.is_empty();
        let token = callback(result);
        with_kernel(|k| k.put_queue(key, queue));
        unlock_bucket(key);
        let woke = !woken.is_empty();
        for tid in woken {
            // try_to_wake_up runs on the waker's CPU.
            let cost = with_kernel(|k| k.unpark(tid, token)).unwrap_or(0);
            if cost > 0 {
                work(cost / 1_000, false);
            }
        }
        if woke && user_space_threads() {
            // A user-space waker's FUTEX_WAKE returns to user space, reading
            // the reschedule flag a wake-up onto its CPU may have set.
            preempt_point(Point::UserReturn);
        }
        result
    }
}

/// parking_lot_core's own code between taking the bucket and the caller's
/// callback (the hash, the bucket lookup, the queue walk): free while warm,
/// since the line model charges its accesses; `sched.park_cold_ns` when it
/// is cold, the thread's first park or unpark since a switch other than its
/// own yield (natively, on this project's 2-vCPU VM, a probe timed 21-29 ns
/// from the call to the callback warm and 69-106 ns after a 5-50 us sleep,
/// one clock read included; `rmap-storm calibrate` measures the
/// difference). It decides races: a releaser just switched back
/// in judges its sleeper that much later, and a spinner on the other CPU
/// may take the lock first (docs/sim.md, "The parking code's cold start").
fn parking_code() {
    let cold = with_kernel(Kernel::take_parking_cold).unwrap_or(0);
    if cold > 0 {
        work_ps(cold, false);
    }
}

/// One access to a line, paid for.
fn touch(line: LineId, kind: Access) {
    let moved = access(line, kind);
    accessed(kind, moved);
}

/// parking_lot_core's ThreadData of simulated thread `tid`: its key, its
/// tokens and its parker's futex word, one line. Named above any address a
/// word of the run can have (user space ends below 2^57 on x86-64 and
/// arm64 even with 5-level page tables), so it never aliases one.
fn thread_data(tid: u32) -> LineId {
    (1 << 63) + tid as usize * 64
}

/// raw_spin_lock_irq(&wait_lock): preemption off until the unlock; read the
/// lock's line, spin on it while another thread holds the lock, then take it
/// with an atomic.
fn lock_bucket(key: usize) {
    with_kernel(Kernel::preempt_disable);
    while with_kernel(|k| k.holds_bucket(key) || k.teardown) == Some(false) {
        let moved = access(key, Access::Read);
        with_kernel(|k| k.accessed(Access::Read, moved));
        if with_kernel(|k| k.lock_bucket(key)) == Some(Suspend::No) {
            let moved = access(key, Access::Rmw);
            with_kernel(|k| k.accessed(Access::Rmw, moved));
        } else {
            suspend();
            // Only a user-space waiter (`Preempt::User`) is switched out here.
            preempt_point(Point::Anywhere);
        }
    }
}

/// raw_spin_unlock_irq(&wait_lock): a store to its line wakes its spinners.
fn unlock_bucket(key: usize) {
    with_kernel(|k| k.unlock_bucket(key));
    let moved = access(key, Access::Write);
    step(|k| {
        k.accessed(Access::Write, moved);
        k.preempt_enable();
        k.preempt_point(Point::Anywhere)
    });
}

/// An atomic word whose every access goes through the simulation's cache
/// model. The value lives in a real atomic (relaxed: a run is one OS thread,
/// and runs hand worlds between threads only through join/spawn).
#[derive(Debug, Default)]
pub struct SimAtomic<A>(A);

impl<A> SimAtomic<A> {
    #[inline]
    fn line(&self) -> LineId {
        self as *const Self as usize
    }
}

/// A line is named by its word's address, and the allocator hands a freed
/// word's address to the next object: a vma split off and freed, a new one
/// allocated where it was. Without this, the new word would inherit the
/// old one's line (its holder, its version), and a run would depend on the
/// allocator's history, which differs between a fresh process and one that
/// ran other threads first (a crosscheck's sims after `calibrate`'s storms
/// gave 156.1k/s where a fresh `run` of the same profile and seeds gave
/// 125.1-129.5k/s). So a dropped word's line is forgotten: the next word at
/// its address starts a line of its own.
impl<A> Drop for SimAtomic<A> {
    fn drop(&mut self) {
        let k = KERNEL.with(Cell::get);
        if k.is_null() {
            return;
        }
        // SAFETY: as in `with_kernel`. A word dropped while the kernel is
        // borrowed (the run's teardown) has no next access to mislead.
        if let Ok(mut k) = unsafe { &*k }.try_borrow_mut() {
            k.forget_line(self.line());
        }
    }
}

macro_rules! sim_atomic_int {
    ($($atomic:ty => $t:ty,)*) => {$(
        impl AtomicInt<$t> for SimAtomic<$atomic> {
            fn new(value: $t) -> Self {
                SimAtomic(<$atomic>::new(value))
            }
            #[inline]
            fn load(&self, _: Ordering) -> $t {
                let moved = access(self.line(), Access::Read);
                let v = self.0.load(Ordering::Relaxed);
                accessed(Access::Read, moved);
                v
            }
            #[inline]
            fn store(&self, value: $t, _: Ordering) {
                let moved = access(self.line(), Access::Write);
                self.0.store(value, Ordering::Relaxed);
                accessed(Access::Write, moved);
            }
            #[inline]
            fn swap(&self, value: $t, _: Ordering) -> $t {
                let moved = access(self.line(), Access::Rmw);
                let v = self.0.swap(value, Ordering::Relaxed);
                accessed(Access::Rmw, moved);
                v
            }
            #[inline]
            fn compare_exchange(&self, current: $t, new: $t, _: Ordering, _: Ordering) -> Result<$t, $t> {
                let moved = access(self.line(), Access::Rmw);
                let v = self.0.compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed);
                accessed(Access::Rmw, moved);
                v
            }
            #[inline]
            fn compare_exchange_weak(&self, current: $t, new: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                // No spurious failures: a weak CAS fails only as a strong one would.
                self.compare_exchange(current, new, s, f)
            }
            #[inline]
            fn fetch_add(&self, value: $t, _: Ordering) -> $t {
                let moved = access(self.line(), Access::Rmw);
                let v = self.0.fetch_add(value, Ordering::Relaxed);
                accessed(Access::Rmw, moved);
                v
            }
            #[inline]
            fn fetch_sub(&self, value: $t, _: Ordering) -> $t {
                let moved = access(self.line(), Access::Rmw);
                let v = self.0.fetch_sub(value, Ordering::Relaxed);
                accessed(Access::Rmw, moved);
                v
            }
            #[inline]
            fn fetch_or(&self, value: $t, _: Ordering) -> $t {
                let moved = access(self.line(), Access::Rmw);
                let v = self.0.fetch_or(value, Ordering::Relaxed);
                accessed(Access::Rmw, moved);
                v
            }
            #[inline]
            fn fetch_and(&self, value: $t, _: Ordering) -> $t {
                let moved = access(self.line(), Access::Rmw);
                let v = self.0.fetch_and(value, Ordering::Relaxed);
                accessed(Access::Rmw, moved);
                v
            }
        }
    )*};
}

sim_atomic_int! {
    AtomicU32 => u32,
    AtomicUsize => usize,
}

impl AtomicFlag for SimAtomic<AtomicBool> {
    fn new(value: bool) -> Self {
        SimAtomic(AtomicBool::new(value))
    }
    #[inline]
    fn load(&self, _: Ordering) -> bool {
        let moved = access(self.line(), Access::Read);
        let v = self.0.load(Ordering::Relaxed);
        accessed(Access::Read, moved);
        v
    }
    #[inline]
    fn store(&self, value: bool, _: Ordering) {
        let moved = access(self.line(), Access::Write);
        self.0.store(value, Ordering::Relaxed);
        accessed(Access::Write, moved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cpus::CpuList;
    use crate::engine::sim::run::{self, Body, Timers};
    use crate::locks::stats::ThreadStats;
    use crate::model::machine::SchedPolicy;
    use crate::model::machine::{self, MachineProfile};

    /// Run `body` as the one thread of a one-CPU machine of `profile`.
    fn run_one(profile: &MachineProfile, body: Body<'_>) -> run::Ended {
        run_on(
            Kernel::new(profile, 1, Preempt::Voluntary, 1, None, 1),
            vec![body],
        )
    }

    fn run_on(kernel: Kernel, bodies: Vec<Body<'_>>) -> run::Ended {
        let timers = Timers {
            window_ps: 0,
            on_window: Box::new(|_, _| {}),
            stop_ps: u64::MAX,
            on_stop: Box::new(|| {}),
            cut_off_ps: u64::MAX,
        };
        let mut stats: Vec<ThreadStats> = bodies.iter().map(|_| ThreadStats::default()).collect();
        run::run(kernel, bodies, &mut stats, timers)
    }

    fn profile() -> MachineProfile {
        machine::load(&MachineProfile::default_path()).expect("default profile")
    }

    /// Three threads on two CPUs, round-robin: the second ends after 0.1 ms
    /// and its CPU goes idle. Unpinned, that CPU pulls the third thread and
    /// the run ends after about 1.1 ms; pinned (`--pin 0-1`), the third
    /// stays on CPU 0 behind the first and the run takes about 2 ms.
    #[test]
    fn an_idle_cpu_pulls_only_threads_not_pinned_elsewhere() {
        let p = profile();
        let end_ms = |pin: Option<&CpuList>| {
            let bodies = [1_000, 100, 1_000]
                .map(|us| -> Body<'static> {
                    Box::new(move || (0..us).for_each(|_| Sim::user_work(1_000)))
                })
                .into();
            let kernel = Kernel::new(&p, 2, Preempt::User, 3, pin, 1);
            run_on(kernel, bodies).at_ps as f64 / 1e9
        };
        let free = end_ms(None);
        let pinned = end_ms(Some(&CpuList::parse("0-1", 2).unwrap()));
        assert!(
            (1.05..1.5).contains(&free),
            "unpinned: ended at {free:.3} ms, not about 1.1 (the idle CPU should pull)"
        );
        assert!(
            pinned >= 2.0,
            "pinned: ended at {pinned:.3} ms, before the 2 ms two threads need on one CPU"
        );
    }

    /// One CPU, EEVDF: a hog (`hog_ns` of user work) and a sleeper. Returns
    /// the hog's preemptions and the virtual microsecond the sleeper ended
    /// at.
    fn hog_and_sleeper(sleeper: Body<'static>, hog_first: bool, hog_ns: u64) -> (u64, u64) {
        let mut p = profile();
        p.sched.policy = SchedPolicy::Eevdf;
        let ended = std::rc::Rc::new(Cell::new(0));
        let at = ended.clone();
        let sleeper: Body<'static> = Box::new(move || {
            sleeper();
            at.set(with_kernel(|k| k.now()).unwrap() / 1_000_000);
        });
        let hog: Body<'static> = Box::new(move || Sim::user_work(hog_ns));
        let (bodies, hog_tid) = if hog_first {
            (vec![hog, sleeper], 0)
        } else {
            (vec![sleeper, hog], 1)
        };
        let end = run_on(Kernel::new(&p, 1, Preempt::User, 2, None, 1), bodies);
        (end.threads[hog_tid].nivcsw, ended.get())
    }

    /// The sleeper runs first and sleeps at once, with no lag: woken 100 us
    /// later it is placed at V, which the running hog still is at, so the
    /// hog stays eligible and keeps its CPU for its request (RUN_TO_PARITY;
    /// place_entity and the preemption check happen at one moment in
    /// ttwu_do_activate). The request ends at the first tick, 4 ms: only
    /// then does the sleeper run its 10 us.
    #[test]
    fn a_wakee_without_lag_does_not_preempt_an_eligible_runner() {
        let sleeper: Body<'static> = Box::new(|| {
            Sim::sleep(100_000);
            Sim::user_work(10_000);
        });
        let (preempted, ended_us) = hog_and_sleeper(sleeper, false, 5_000_000);
        assert_eq!(
            preempted, 1,
            "preempted at the wake-up, not only at the tick"
        );
        assert!(
            (4_000..4_100).contains(&ended_us),
            "the sleeper ended at {ended_us} us, not just after the hog's first tick"
        );
    }

    /// The hog runs first, to its first tick (4 ms: past its 3 ms request),
    /// while the sleeper waits; the sleeper then runs 10 us and sleeps owed
    /// about half of that (positive lag). Woken 100 us later it is placed
    /// that far behind V, the hog is now ahead of V and the wakee is the
    /// pick: it preempts the hog at once.
    #[test]
    fn a_wakee_owed_time_preempts_a_runner_ahead_of_the_average() {
        let sleeper: Body<'static> = Box::new(|| {
            Sim::user_work(10_000);
            Sim::sleep(100_000);
            Sim::user_work(10_000);
        });
        let (preempted, ended_us) = hog_and_sleeper(sleeper, true, 5_000_000);
        assert_eq!(preempted, 2, "the tick's and the wake-up's preemptions");
        assert!(
            (4_100..4_200).contains(&ended_us),
            "the sleeper ended at {ended_us} us, not 10 us after its wake-up at about 4.11 ms"
        );
    }

    /// Two CPUs, EEVDF, `--preempt user`. On CPU 0 `hog` runs to its first
    /// tick (4 ms, past its 3 ms request), the sleeper runs 10 us and parks
    /// owed time; at 4.2 ms CPU 1's thread unparks it, coming out of idle
    /// first (10 us, `sched.wakeup_idle_ns`). The wakee preempts the hog,
    /// which is ahead of V, but from another CPU: the flag is set at once,
    /// the reschedule IPI lands 50 us later (`sched.resched_ipi_ns` in this
    /// profile). `extra` threads go on after the sleeper, round-robin from
    /// CPU 1. The virtual ns the wakee runs at, and the hog's involuntary
    /// switches.
    fn remote_wakeup(hog: Body<'static>, extra: Vec<Body<'static>>) -> (u64, u64) {
        const KEY: usize = 0x80;
        let mut p = profile();
        p.sched.policy = SchedPolicy::Eevdf;
        p.sched.resched_ipi_ns = 50_000.0;
        let resumed = std::rc::Rc::new(Cell::new(0));
        let at = resumed.clone();
        // Round robin over CPUs 0 and 1: the hog and the sleeper on CPU 0.
        let mut bodies: Vec<Body<'static>> = vec![
            hog,
            Box::new(|| {
                sleep_until(4_200_000);
                // SAFETY: the test's own key; the callback does not touch the sim.
                let woken =
                    unsafe { Sim::unpark_filter(KEY, |_| FilterOp::Unpark, |_| UnparkToken(1)) };
                assert_eq!(woken.unparked_threads, 1, "the sleeper was not parked");
            }),
            Box::new(move || {
                Sim::user_work(10_000);
                // SAFETY: as above.
                let parked = unsafe { Sim::park(KEY, || true, ParkToken(0)) };
                assert_eq!(parked, ParkResult::Unparked(UnparkToken(1)));
                at.set(with_kernel(|k| k.now()).unwrap() / 1_000);
            }),
        ];
        bodies.extend(extra);
        let pin = CpuList::parse("0-1", 2).unwrap();
        let threads = bodies.len();
        let end = run_on(
            Kernel::new(&p, 2, Preempt::User, threads, Some(&pin), 1),
            bodies,
        );
        (resumed.get(), end.threads[0].nivcsw)
    }

    /// A hog in pure user work meets the flag when the IPI interrupts it:
    /// the wakee runs 50 us after its wake-up at 4.21 ms, then a switch;
    /// not after the 0.6 us a wake-up takes to queue (`sched.wakeup_ns`).
    #[test]
    fn a_remote_wakeup_preempts_when_its_reschedule_ipi_arrives() {
        let (resumed_ns, preempted) =
            remote_wakeup(Box::new(|| Sim::user_work(5_000_000)), Vec::new());
        assert_eq!(preempted, 2, "the tick's and the wake-up's preemptions");
        assert!(
            (4_260_000..4_262_000).contains(&resumed_ns),
            "the wakee ran at {resumed_ns} ns, not 50 us after its wake-up at 4.21 ms"
        );
    }

    /// User-space code never reads TIF_NEED_RESCHED: a hog touching a lock
    /// word every 100 ns still runs until the IPI lands.
    #[test]
    fn user_space_code_meets_a_remote_reschedule_only_by_its_ipi() {
        let hog: Body<'static> = Box::new(|| {
            let word = <Sim as Platform>::AtomicU32::new(0);
            for _ in 0..50_000 {
                word.fetch_add(1, Ordering::Relaxed);
                Sim::user_work(100);
            }
        });
        let (resumed_ns, _) = remote_wakeup(hog, Vec::new());
        assert!(
            (4_260_000..4_262_000).contains(&resumed_ns),
            "the wakee ran at {resumed_ns} ns, not at the IPI 50 us after its wake-up at 4.21 ms"
        );
    }

    /// A FUTEX_WAKE's return to user space reads the flag: the hog, waking
    /// a thread parked on CPU 1 at 4.23 ms, gives its CPU away then, 20 us
    /// before the IPI.
    #[test]
    fn a_syscall_exit_meets_a_remote_reschedule_before_its_ipi() {
        const OTHER: usize = 0x100;
        let hog: Body<'static> = Box::new(|| {
            while with_kernel(|k| k.now()).unwrap() < 4_230_000_000 {
                Sim::user_work(1_000);
            }
            // SAFETY: the test's own key; the callback does not touch the sim.
            let woken =
                unsafe { Sim::unpark_filter(OTHER, |_| FilterOp::Unpark, |_| UnparkToken(1)) };
            assert_eq!(woken.unparked_threads, 1, "the other thread was not parked");
            Sim::user_work(1_000_000);
        });
        let other: Body<'static> = Box::new(|| {
            // SAFETY: as above.
            let parked = unsafe { Sim::park(OTHER, || true, ParkToken(0)) };
            assert_eq!(parked, ParkResult::Unparked(UnparkToken(1)));
        });
        let (resumed_ns, _) = remote_wakeup(hog, vec![other]);
        assert!(
            (4_230_000..4_240_000).contains(&resumed_ns),
            "the wakee ran at {resumed_ns} ns, not at the hog's FUTEX_WAKE at 4.23 ms"
        );
    }

    /// The sleeper runs 3.9 ms first, past its 3 ms request, and sleeps 5 ms
    /// ahead of V: DELAY_DEQUEUE keeps it queued. At the 8 ms tick the hog
    /// has caught up, the pick meets the sleeper eligible, a little owed,
    /// and it leaves the queue with that lag cut to 0 (DELAY_ZERO). Woken at
    /// 8.9 ms it is placed at V, so it waits for the hog's request to end at
    /// the 12 ms tick; with the lag kept, it would preempt the hog at once.
    #[test]
    fn a_sleeper_dequeued_late_keeps_no_lag_it_earned_while_queued() {
        let sleeper: Body<'static> = Box::new(|| {
            Sim::user_work(3_900_000);
            Sim::sleep(5_000_000);
            Sim::user_work(10_000);
        });
        let (_, ended_us) = hog_and_sleeper(sleeper, false, 20_000_000);
        assert!(
            (12_000..12_100).contains(&ended_us),
            "the sleeper ended at {ended_us} us, not just after the 12 ms tick"
        );
    }

    /// CPU 1's two threads park, then CPU 0's thread walks the queue. Each
    /// waiter's ThreadData line was last written on CPU 1, so the waker
    /// reads it across the die before it judges that waiter: the second
    /// judgement comes at least one transfer (`cache.die_ns`, 48 ns) after
    /// the first.
    #[test]
    fn a_waker_reads_each_remote_waiters_line_before_judging_it() {
        const KEY: usize = 0x80;
        let judged = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let at = judged.clone();
        let park: fn() -> Body<'static> = || {
            Box::new(|| {
                // SAFETY: the test's own key; the validation does not touch the sim.
                let parked = unsafe { Sim::park(KEY, || true, ParkToken(0)) };
                assert_eq!(parked, ParkResult::Unparked(UnparkToken(1)));
            })
        };
        let bodies: Vec<Body<'static>> = vec![
            Box::new(move || {
                sleep_until(1_000_000);
                // Skip the first, wake the second: between the two
                // judgements only the second waiter's line is touched.
                let filter = |_| {
                    let mut at = at.borrow_mut();
                    at.push(with_kernel(|k| k.now()).unwrap());
                    if at.len() == 1 {
                        FilterOp::Skip
                    } else {
                        FilterOp::Unpark
                    }
                };
                // SAFETY: as above; the filter only reads the clock.
                let woken = unsafe { Sim::unpark_filter(KEY, filter, |_| UnparkToken(1)) };
                assert_eq!(woken.unparked_threads, 1, "the two waiters were not parked");
                // SAFETY: as above.
                unsafe { Sim::unpark_filter(KEY, |_| FilterOp::Unpark, |_| UnparkToken(1)) };
            }),
            park(),
            Box::new(|| {}),
            park(),
        ];
        let pin = CpuList::parse("0-1", 2).unwrap();
        run_on(
            Kernel::new(&profile(), 2, Preempt::User, 4, Some(&pin), 1),
            bodies,
        );
        let judged = judged.borrow();
        assert_eq!(judged.len(), 2, "the filter saw {} waiters", judged.len());
        let gap_ps = judged[1] - judged[0];
        assert!(
            gap_ps >= 48_000,
            "the second waiter was judged {gap_ps} ps after the first, less than its line's move"
        );
    }

    /// One CPU; a walker that wakes nobody (its filter stops at the one
    /// sleeper) sleeps (switched out, blocked), then unparks twice in a
    /// row, yields to B (which works for 20 ms) and unparks again. With
    /// `sched.park_cold_ns` at 1 us, only the first unpark after the sleep
    /// reaches its filter 1 us later than a warm one: back from its own
    /// yield the code is still warm.
    #[test]
    fn only_the_first_park_or_unpark_after_a_switch_pays_the_cold_code() {
        const KEY: usize = 0x80;
        let mut p = profile();
        p.sched.park_cold_ns = 1_000.0;
        let took = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let into = took.clone();
        let bodies: Vec<Body<'static>> = vec![
            Box::new(move || {
                let unpark = || {
                    let t0 = with_kernel(|k| k.now()).unwrap();
                    let mut reached = t0;
                    let filter = |_| {
                        reached = with_kernel(|k| k.now()).unwrap();
                        FilterOp::Stop
                    };
                    // SAFETY: the test's own key; the filter only reads the clock.
                    unsafe { Sim::unpark_filter(KEY, filter, |_| UnparkToken(0)) };
                    reached - t0
                };
                // One waiter for the walks to reach, parked for good.
                sleep_until(1_000);
                let (cold, warm) = (unpark(), unpark());
                let switches = Sim::ctx_switches().1;
                Sim::yield_now();
                assert!(
                    Sim::ctx_switches().1 > switches,
                    "the yield did not switch, so it tells nothing"
                );
                into.borrow_mut().extend([cold, warm, unpark()]);
            }),
            Box::new(|| {
                // SAFETY: the test's own key; the validation does not touch the sim.
                unsafe { Sim::park(KEY, || true, ParkToken(0)) };
            }),
            Box::new(|| Sim::charge(20_000_000)),
        ];
        let pin = CpuList::parse("0", 1).unwrap();
        run_on(Kernel::new(&p, 1, Preempt::User, 3, Some(&pin), 1), bodies);
        let took = took.borrow();
        let [cold, warm, after_yield] = took[..] else {
            panic!("the walker did not finish: {took:?}");
        };
        assert!(
            cold >= warm + 1_000_000,
            "after the sleep the filter came {cold} ps after the call, warm {warm} ps"
        );
        assert!(
            after_yield < warm + 500_000,
            "back from its own yield the filter came {after_yield} ps after the call, warm {warm} ps"
        );
    }

    /// Sleep until virtual nanosecond `ns`.
    fn sleep_until(ns: u64) {
        let now = with_kernel(|k| k.now()).unwrap() / 1_000;
        Sim::sleep(ns - now);
    }

    /// One CPU, EEVDF. Z sleeps at once, with no lag, until 5 ms. X runs to
    /// its first tick (4 ms) and on to 4.2 ms, then ends; P runs 10 us at
    /// the tick and sleeps owed about 2 ms, until 5.004 ms. The CPU is idle
    /// when Z wakes and takes 10 us (the profile's wakeup_idle_ns) to get
    /// there; P's wake-up comes meanwhile. Natively it joins the idle CPU's
    /// wake list, and on arrival schedule() picks among both: P, which is
    /// owed time, runs first and Z, which has not run, is never preempted.
    #[test]
    fn wakees_of_a_cpu_still_coming_out_of_idle_are_picked_among_on_arrival() {
        let mut p = profile();
        p.sched.policy = SchedPolicy::Eevdf;
        let bodies: Vec<Body<'static>> = vec![
            Box::new(|| {
                sleep_until(5_000_000);
                Sim::user_work(50_000);
            }),
            Box::new(|| Sim::user_work(4_200_000)),
            Box::new(|| {
                Sim::user_work(10_000);
                sleep_until(5_004_000);
                Sim::user_work(50_000);
            }),
        ];
        let mut kernel = Kernel::new(&p, 1, Preempt::User, 3, None, 1);
        kernel.record_switches();
        let ended = run_on(kernel, bodies);
        let z = ended.threads[0];
        assert_eq!(z.nivcsw, 0, "Z was preempted before or after it ran");
        let from_idle: Vec<_> = ended
            .trace
            .expect("recorded")
            .switches
            .iter()
            .filter(|s| s.prev.is_none() && s.at_ps > 4_500_000_000)
            .map(|s| (s.at_ps / 1_000_000, s.next))
            .collect();
        assert_eq!(
            from_idle,
            vec![(5_010, Some(2))],
            "the CPU's switch out of idle: to P, at Z's arrival"
        );
    }

    /// CPU 0 comes out of idle for Z at 1.01 ms (10 us after its timer); Q
    /// wakes behind it. When Z sleeps at 1.11 ms, CPU 0 switches to Q, which
    /// starts 0.6 us later (ctx_switch_ns): a switch, not an arrival from
    /// idle, so a wake-up then is weighed against Q as on any busy CPU. A
    /// probe on CPU 1 looks at CPU 0 in that window.
    #[test]
    fn a_cpu_switching_threads_is_not_coming_out_of_idle() {
        let p = profile();
        let seen = std::rc::Rc::new(Cell::new(None));
        let probe = seen.clone();
        let bodies: Vec<Body<'static>> = vec![
            Box::new(|| {
                sleep_until(1_000_000);
                Sim::user_work(100_000);
                Sim::sleep(1_000_000);
            }),
            Box::new(move || {
                // Woken at 1.1003 ms, on CPU 1 10 us later.
                sleep_until(1_100_300);
                probe.set(with_kernel(|k| (k.now() / 1_000, k.arriving(0, k.now()))));
            }),
            Box::new(|| {
                sleep_until(1_050_000);
                Sim::user_work(10_000);
            }),
        ];
        let pin = CpuList::parse("0,1,0", 2).unwrap();
        run_on(Kernel::new(&p, 2, Preempt::User, 3, Some(&pin), 1), bodies);
        let (at_ns, arriving) = seen.get().expect("the probe ran");
        assert!(
            (1_110_000..1_110_600).contains(&at_ns),
            "the probe looked at {at_ns} ns, not in CPU 0's switch to Q"
        );
        assert!(
            !arriving,
            "CPU 0's switch to Q taken for a wake-up from idle"
        );
    }

    /// A user-space waiter on a queue lock (parking_lot's bucket lock) whose
    /// CPU has another thread queued: its slice may end, so its spin is cut
    /// at the slice end, and it must still see the holder's release at once.
    /// CPU 1's thread holds the lock 100 us; CPU 0's first thread asks for
    /// it at 10 us and gets it as the release's write reaches it; CPU 0's
    /// second thread only waits for the CPU. (With the lines watched under
    /// the thread's event generation, the cut invalidated the watch and the
    /// waiter spun to its slice end at the 4 ms tick.)
    #[test]
    fn a_spin_cut_at_its_slice_end_still_sees_the_release() {
        const KEY: usize = 0x40;
        let got = std::rc::Rc::new(Cell::new(0));
        let at = got.clone();
        let bodies: Vec<Body<'static>> = vec![
            Box::new(move || {
                Sim::user_work(10_000);
                lock_bucket(KEY);
                at.set(with_kernel(|k| k.now()).unwrap() / 1_000);
                unlock_bucket(KEY);
            }),
            Box::new(|| {
                lock_bucket(KEY);
                Sim::user_work(100_000);
                unlock_bucket(KEY);
            }),
            Box::new(|| Sim::user_work(1_000_000)),
        ];
        let pin = CpuList::parse("0,1,0", 2).unwrap();
        run_on(
            Kernel::new(&profile(), 2, Preempt::User, 3, Some(&pin), 1),
            bodies,
        );
        let ns = got.get();
        assert!(
            (100_000..101_000).contains(&ns),
            "the waiter took the lock at {ns} ns, not as the release at 100 us reached it"
        );
    }

    /// CPU 0 runs a hog and, second, a thread of 6 ms of work: with 3 ms
    /// requests checked at 4 ms ticks, the two tie at 8 ms and the second
    /// runs on to 10 ms, so it blocks 2 ms ahead of the hog. CPU 1's thread
    /// goes to sleep just after, finding nothing it may pull. The sleeper
    /// wakes 10 us later: under EEVDF on CPU 0, whose queue it never left
    /// (DELAY_DEQUEUE: it slept with negative lag; ttwu_runnable), not on
    /// the idle CPU 1. Under CFS (12 ms slices) CPU 1 pulled it at 10 ms
    /// and it wakes there.
    #[test]
    fn an_eevdf_thread_that_slept_ahead_wakes_where_it_is_still_queued() {
        let woke_on = |policy| {
            let mut p = profile();
            p.sched.policy = policy;
            let cpu = std::cell::Cell::new(usize::MAX);
            let cpu = &cpu;
            let bodies: Vec<Body<'_>> = vec![
                Box::new(|| Sim::user_work(20_000_000)),
                Box::new(|| {
                    Sim::user_work(10_005_000);
                    Sim::sleep(30_000_000);
                }),
                Box::new(move || {
                    Sim::user_work(6_000_000);
                    Sim::sleep(10_000);
                    cpu.set(with_kernel(|k| k.cpu()).unwrap());
                }),
            ];
            run_on(Kernel::new(&p, 2, Preempt::User, 3, None, 1), bodies);
            cpu.get()
        };
        assert_eq!(woke_on(SchedPolicy::Cfs), 1, "CFS: where it was pulled");
        assert_eq!(woke_on(SchedPolicy::Eevdf), 0, "EEVDF: where it is queued");
    }

    /// 10 ms of udelay in 1 us pieces takes 10 ms without noise, and about
    /// 11 ms with an interruption of 10 us every 100 us of work.
    #[test]
    fn noise_stretches_work_by_its_share() {
        let body =
            || -> Body<'static> { Box::new(|| (0..10_000).for_each(|_| Sim::udelay(1_000))) };
        let quiet = run_one(&profile(), body());
        assert_eq!(quiet.at_ps, 10_000_000_000, "no noise: exactly the work");
        let mut noisy = profile();
        noisy.sched.noise_interval_ns = 100_000.0;
        noisy.sched.noise_ns = 10_000.0;
        let ms = run_one(&noisy, body()).at_ps as f64 / 1e9;
        assert!(
            (ms - 11.0).abs() < 0.3,
            "with noise the work took {ms:.3} ms, not about 11"
        );
    }

    /// A busy-wait takes the profile's extra beyond its length, once per
    /// call; a charge of real work takes exactly its length; a busy-wait of
    /// 0 ns takes nothing, as natively (the spin returns before its first
    /// clock read).
    #[test]
    fn a_busy_wait_overshoots_by_the_profiles_extra_and_a_charge_does_not() {
        let mut p = profile();
        p.work.busy_wait_extra_ns = 150.0;
        let took_ns = |body: Body<'static>| run_one(&p, body).at_ps / 1_000;
        assert_eq!(
            took_ns(Box::new(|| (0..10).for_each(|_| Sim::udelay(1_000)))),
            10 * 1_150
        );
        assert_eq!(
            took_ns(Box::new(|| (0..10).for_each(|_| Sim::user_work(1_000)))),
            10 * 1_150
        );
        assert_eq!(
            took_ns(Box::new(|| (0..10).for_each(|_| Sim::charge(1_000)))),
            10_000
        );
        assert_eq!(took_ns(Box::new(|| Sim::udelay(0))), 0);
    }

    /// A sched_yield costs its caller the profile's `sched.yield_ns`
    /// whether or not it switches; two threads yielding to each other on one
    /// CPU pay that and a switch for every yield (the partner is still there
    /// at each), and one more when the first to finish exits (natively here
    /// such a ping-pong took 1.01-1.03 us a yield, against 222-293 ns for
    /// the call alone and 717-810 ns for a switch, measured apart).
    #[test]
    fn a_yield_costs_the_call_and_a_switch_on_top_when_it_switches() {
        let mut p = profile();
        p.sched.yield_ns = 300.0;
        p.sched.ctx_switch_ns = 1_000.0;
        let yields = || -> Body<'static> { Box::new(|| (0..10).for_each(|_| Sim::yield_now())) };
        assert_eq!(run_one(&p, yields()).at_ps / 1_000, 10 * 300);
        let kernel = Kernel::new(&p, 1, Preempt::User, 2, None, 1);
        let ended = run_on(kernel, vec![yields(), yields()]);
        let switches: u64 = ended.threads.iter().map(|t| t.nivcsw).sum();
        assert_eq!(switches, 20, "each yield hands the CPU over");
        assert_eq!(ended.at_ps / 1_000, 20 * 300 + 21 * 1_000);
    }

    /// EEVDF's pick after a yield considers the yielder too (pick_eevdf
    /// looks at the current entity): one that is still eligible after
    /// forfeiting its request, with the earliest deadline, runs on without
    /// a switch. Thread 0 runs to the first tick (4 ms, slice 1 ms: runtime 4
    /// ms, deadline 5 ms); thread 1, at 0 ms, forfeits 1 ms a yield: after
    /// yields 1-4 (runtime 1-4 ms, V 2.5-4 ms, deadlines up to 5 ms) it is
    /// still the pick; the fifth puts it ahead of V and hands the CPU over.
    #[test]
    fn an_eevdf_yielder_still_the_pick_keeps_its_cpu() {
        let switches = |yields: usize| {
            let mut p = profile();
            p.sched.policy = SchedPolicy::Eevdf;
            p.sched.base_slice_ns = 1e6;
            p.sched.tick_ns = 4e6;
            p.sched.noise_interval_ns = 0.0;
            let bodies: Vec<Body<'static>> = vec![
                Box::new(|| Sim::user_work(8_000_000)),
                Box::new(move || (0..yields).for_each(|_| Sim::yield_now())),
            ];
            let ended = run_on(Kernel::new(&p, 1, Preempt::User, 2, None, 1), bodies);
            ended.threads[1].nivcsw
        };
        assert_eq!(switches(4), 0, "still eligible with the earliest deadline");
        assert_eq!(switches(5), 1, "ahead of V");
    }
}
