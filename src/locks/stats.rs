//! Lock instrumentation: per-thread counters cheap enough to leave on.
//!
//! Every kind reports through [`count`], [`note_wait`] and [`note_grant`];
//! nothing here is shared between threads while a run is going, so counting
//! costs a thread-local add and no cache-line traffic (the object of study is
//! the lock's own line). The guard layer ([`super::guard`]) tags which lock
//! class the current thread is acquiring ([`set_class`]: anon_vma root,
//! i_mmap, mmap_lock: one thread-local store) and, after each release
//! ([`released`]), counts the acquisition by mode and records the grants
//! noted meanwhile, so neither a count nor a histogram insert of a granted
//! acquisition happens inside its critical section. Engines drain each
//! thread's figures with [`take`].
//!
//! "Thread" is the execution context: a real thread by default, or, while an
//! engine that multiplexes simulated threads on one OS thread runs one of
//! them inside [`installed`], that simulated thread's own [`ThreadStats`].
//!
//! While a run is traced ([`super::trace`]), the same two calls that start
//! and end a slow path's figures also keep its stamped start and grant in
//! the context's buffer; engines hand them over with [`take_trace`].

use super::trace::{self, Contention, What};
use crate::mode::Mode;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::cell::{Cell, RefCell};

/// The events a lock counts, declared once: the report reads this list.
macro_rules! events {
    ($($(#[doc = $doc:literal])* $name:ident => $key:literal,)*) => {
        /// One countable lock event.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Event { $($(#[doc = $doc])* $name,)* }

        impl Event {
            /// Every event, in report order.
            pub const ALL: &'static [Event] = &[$(Event::$name,)*];
            /// The key used in tables and JSON.
            pub fn key(self) -> &'static str {
                match self { $(Event::$name => $key,)* }
            }
        }
    };
}

events! {
    /// A shared hold granted (including try and critical reads that succeeded).
    AcquireRead => "acquire_read",
    /// An exclusive hold granted.
    AcquireWrite => "acquire_write",
    /// A shared request that could not take the fast path.
    ContendedRead => "contended_read",
    /// An exclusive request that could not take the fast path.
    ContendedWrite => "contended_write",
    /// A try_lock that gave up.
    TryFail => "try_fail",
    /// One iteration of a busy-wait loop.
    Spin => "spins",
    /// The thread parked (a context switch in the kernel).
    Sleep => "sleeps",
    /// Ownership passed to a specific waiter by the releaser (rwsem handoff, FIFO grant).
    Handoff => "handoffs",
    /// A writer took the lock ahead of queued waiters.
    Steal => "steals",
    /// One release that woke queued readers together.
    WakeBatch => "wake_batches",
    /// Readers woken by those batches (readers_woken / wake_batches = mean batch).
    ReaderWoken => "readers_woken",
    /// A read_critical that entered past a queued writer.
    CriticalPass => "critical_passes",
    /// A downgrade_write.
    Downgrade => "downgrades",
    /// A writer waited an RCU grace period of its own (percpu-rwsem's
    /// rcu_sync_enter from IDLE).
    GracePeriod => "grace_periods",
    /// A writer's spin on a reader-owned lock timed out and made the lock
    /// non-spinnable for the writers after it (rwsem.c's lockevent
    /// rwsem_opt_nospin).
    NoSpin => "nonspinnable_set",
}

/// Which lock of the world the current thread is acquiring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(usize)]
pub enum LockClass {
    /// The root anon_vma's lock (anon_vma->root->rwsem), or a lone lock under test.
    AnonVma,
    /// An address_space's i_mmap lock.
    IMmap,
    /// An mm's mmap_lock.
    MmapLock,
}

impl LockClass {
    pub const ALL: [LockClass; 3] = [LockClass::AnonVma, LockClass::IMmap, LockClass::MmapLock];
    pub fn key(self) -> &'static str {
        match self {
            LockClass::AnonVma => "anon_vma",
            LockClass::IMmap => "i_mmap",
            LockClass::MmapLock => "mmap_lock",
        }
    }
}

const NEVENTS: usize = Event::ALL.len();
const NCLASSES: usize = LockClass::ALL.len();

/// One thread's (or, after [`LockStats::merge`], a run's) figures for one class.
#[derive(Clone, Debug)]
pub struct ClassStats {
    pub counts: [u64; NEVENTS],
    /// Nanoseconds from entering a slow path to holding the lock.
    pub wait_ns: Histogram<u64>,
}

impl Default for ClassStats {
    fn default() -> Self {
        ClassStats {
            counts: [0; NEVENTS],
            // 2 significant digits (1% error), auto-resizing; ~20 KiB a thread.
            wait_ns: Histogram::new(2).expect("2 significant figures is valid"),
        }
    }
}

impl ClassStats {
    pub fn get(&self, ev: Event) -> u64 {
        self.counts[ev as usize]
    }

    pub fn merge(&mut self, other: &ClassStats) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.wait_ns
            .add(&other.wait_ns)
            .expect("auto-resizing histograms always merge");
    }
}

/// Figures per lock class.
#[derive(Clone, Debug, Default)]
pub struct LockStats {
    pub classes: [ClassStats; NCLASSES],
}

impl LockStats {
    pub fn class(&self, c: LockClass) -> &ClassStats {
        &self.classes[c as usize]
    }

    pub fn merge(&mut self, other: &LockStats) {
        for (a, b) in self.classes.iter_mut().zip(other.classes.iter()) {
            a.merge(b);
        }
    }
}

/// A slow-path grant not yet recorded.
#[derive(Clone, Copy, Debug)]
struct Grant {
    class: usize,
    /// Busy-wait polls it took (counted as [`Event::Spin`]).
    spins: u64,
    /// Nanoseconds from the slow path's start to the grant.
    wait_ns: u64,
}

/// What one thread accumulates: its figures, the class it is acquiring, and
/// the grants noted since its last release.
#[derive(Debug, Default)]
pub struct ThreadStats {
    class: usize,
    stats: LockStats,
    pending: Vec<Grant>,
    /// Its slow paths' starts and grants while [`trace::on`].
    trace: Vec<Contention>,
}

impl ThreadStats {
    /// Record the pending grants and hand over everything, leaving zeroes.
    pub fn take(&mut self) -> LockStats {
        self.flush_waits();
        std::mem::take(&mut self.stats)
    }

    /// Hand over the contention events recorded so far.
    pub fn take_trace(&mut self) -> Vec<Contention> {
        std::mem::take(&mut self.trace)
    }

    fn flush_waits(&mut self) {
        for Grant {
            class,
            spins,
            wait_ns: ns,
        } in self.pending.drain(..)
        {
            self.stats.classes[class].counts[Event::Spin as usize] += spins;
            let h = &mut self.stats.classes[class].wait_ns;
            // `record` grows the auto-resizing histogram; `saturating_record`
            // alone would clamp every wait to its initial range (about 2 us).
            // Clamp only if growing failed, so a lock path never panics.
            if h.record(ns).is_err() {
                h.saturating_record(ns);
            }
        }
    }
}

thread_local! {
    static OWN: RefCell<ThreadStats> = RefCell::new(ThreadStats::default());
    /// The simulated thread's stats while [`installed`] runs it; null otherwise.
    static INSTALLED: Cell<*mut ThreadStats> = const { Cell::new(std::ptr::null_mut()) };
    /// The OS thread's own class tag, apart from `OWN` (whose lazy
    /// initialisation and borrow flag cost more), so tagging is one store;
    /// copied into `OWN` on each use.
    static OWN_CLASS: Cell<usize> = const { Cell::new(0) };
}

/// Run `f` on the current execution context's stats.
#[inline]
fn with<R>(f: impl FnOnce(&mut ThreadStats) -> R) -> R {
    let installed = INSTALLED.with(Cell::get);
    if installed.is_null() {
        OWN.with(|own| {
            let mut own = own.borrow_mut();
            own.class = OWN_CLASS.with(Cell::get);
            f(&mut own)
        })
    } else {
        // SAFETY: `installed` set it from a `&mut ThreadStats` that outlives
        // the closure it runs, and neither that closure's caller nor any other
        // thread touches the stats meanwhile; `f` never calls back in here.
        f(unsafe { &mut *installed })
    }
}

/// Run `f` with `stats` as the current thread's stats: for an engine that
/// runs many simulated threads on this OS thread, around each resumption of
/// one of them. Restores the previous context afterwards, also on unwind.
pub fn installed<R>(stats: &mut ThreadStats, f: impl FnOnce() -> R) -> R {
    struct Restore(*mut ThreadStats);
    impl Drop for Restore {
        fn drop(&mut self) {
            INSTALLED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(INSTALLED.with(|c| c.replace(stats)));
    f()
}

/// Tag the lock class the current thread's next acquisitions belong to.
#[inline]
pub fn set_class(class: LockClass) {
    let installed = INSTALLED.with(Cell::get);
    if installed.is_null() {
        OWN_CLASS.with(|c| c.set(class as usize));
    } else {
        // SAFETY: as in `with`: the installed stats outlive this call and
        // nothing else touches them meanwhile.
        unsafe { (*installed).class = class as usize };
    }
}

/// Count `n` occurrences of `ev` for the current thread and class.
#[inline]
pub fn count(ev: Event, n: u64) {
    with(|t| t.stats.classes[t.class].counts[ev as usize] += n);
    if trace::on()
        && let Some(mode) = ev.contended_mode()
    {
        traced(What::Begin(mode));
    }
}

/// A slow-path wait of `ns` nanoseconds just ended in a grant: remembered
/// now, put in the histogram after the release ([`released`]).
#[inline]
pub fn note_wait(ns: u64) {
    note_grant(0, ns);
}

/// A busy-wait of `spins` polls and `ns` nanoseconds just ended in a grant:
/// one thread-local push now, counted and put in the histogram after the
/// release ([`released`]).
#[inline]
pub fn note_grant(spins: u64, ns: u64) {
    with(|t| {
        t.pending.push(Grant {
            class: t.class,
            spins,
            wait_ns: ns,
        })
    });
    if trace::on() {
        traced(What::End);
    }
}

/// Record `what` of the class being acquired in the current context's
/// trace. Out of line, and called outside [`with`]'s closures, so that the
/// slow paths the hooks sit in keep the size (and the inlining around
/// them) they have untraced: with the push inside the closure, the guards'
/// release stopped being inlined into the lockhammer loop and its
/// contended figures moved (`cargo bench --bench locks`, tas 29 -> 33 ns,
/// mutex 56 -> 80 ns at c=0 p=0).
#[cold]
#[inline(never)]
fn traced(what: What) {
    with(|t| {
        let class = LockClass::ALL[t.class];
        t.trace.push(Contention::now(class, what));
    });
}

/// After a release, outside the critical section: count the acquisition it
/// ended (`acquired`, [`Event::acquired`] of its mode), then record the
/// grants noted since the last release.
#[inline]
pub fn released(acquired: Event) {
    with(|t| {
        t.stats.classes[t.class].counts[acquired as usize] += 1;
        if !t.pending.is_empty() {
            t.flush_waits();
        }
    });
}

/// Drain the current thread's figures (leaving zeroes behind).
pub fn take() -> LockStats {
    with(ThreadStats::take)
}

/// Drain the current thread's contention events ([`trace`]).
pub fn take_trace() -> Vec<Contention> {
    with(ThreadStats::take_trace)
}

impl Event {
    /// Counted when a request of `mode` is granted.
    #[inline]
    pub fn acquired(mode: Mode) -> Event {
        match mode {
            Mode::Read => Event::AcquireRead,
            Mode::Write => Event::AcquireWrite,
        }
    }

    /// Counted when a request of `mode` leaves the fast path.
    #[inline]
    pub fn contended(mode: Mode) -> Event {
        match mode {
            Mode::Read => Event::ContendedRead,
            Mode::Write => Event::ContendedWrite,
        }
    }

    /// The mode whose slow path this event starts, if it starts one.
    #[inline]
    fn contended_mode(self) -> Option<Mode> {
        match self {
            Event::ContendedRead => Some(Mode::Read),
            Event::ContendedWrite => Some(Mode::Write),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_the_tagged_class_and_take_drains() {
        let _ = take();
        set_class(LockClass::IMmap);
        count(Event::AcquireRead, 3);
        note_wait(1_000);
        note_wait(5_000_000);
        set_class(LockClass::AnonVma);
        count(Event::AcquireRead, 1);
        let s = take();
        assert_eq!(s.class(LockClass::IMmap).get(Event::AcquireRead), 3);
        assert_eq!(s.class(LockClass::AnonVma).get(Event::AcquireRead), 1);
        let waits = &s.class(LockClass::IMmap).wait_ns;
        assert_eq!(waits.len(), 2);
        // A 5 ms wait must not be clamped to the histogram's initial range.
        assert!(waits.max() >= 4_900_000, "max wait {}", waits.max());
        assert_eq!(take().class(LockClass::IMmap).get(Event::AcquireRead), 0);
    }

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = ClassStats::default();
        let mut b = ClassStats::default();
        a.counts[Event::Spin as usize] = 5;
        b.counts[Event::Spin as usize] = 7;
        a.wait_ns.record(100).unwrap();
        b.wait_ns.record(300).unwrap();
        a.merge(&b);
        assert_eq!(a.get(Event::Spin), 12);
        assert_eq!(a.wait_ns.len(), 2);
        assert_eq!(a.wait_ns.max(), b.wait_ns.max());
    }

    #[test]
    fn a_noted_grant_is_counted_only_after_the_release() {
        let _ = take();
        set_class(LockClass::AnonVma);
        note_grant(7, 2_000);
        with(|t| {
            let c = &t.stats.classes[0];
            assert!(c.wait_ns.is_empty(), "recorded before the release");
            assert_eq!(c.get(Event::Spin), 0, "counted before the release");
            assert_eq!(c.get(Event::AcquireWrite), 0);
        });
        released(Event::AcquireWrite);
        with(|t| {
            let c = &t.stats.classes[0];
            assert_eq!(c.wait_ns.len(), 1);
            assert_eq!((c.get(Event::Spin), c.get(Event::AcquireWrite)), (7, 1));
        });
        let _ = take();
    }

    #[test]
    fn a_grant_counts_in_the_class_it_was_noted_in() {
        let _ = take();
        set_class(LockClass::MmapLock);
        note_grant(3, 100);
        // A nested lock of another class is released first.
        set_class(LockClass::AnonVma);
        released(Event::AcquireRead);
        let s = take();
        assert_eq!(s.class(LockClass::MmapLock).get(Event::Spin), 3);
        assert_eq!(s.class(LockClass::AnonVma).get(Event::AcquireRead), 1);
        assert_eq!(s.class(LockClass::AnonVma).get(Event::Spin), 0);
    }

    #[test]
    fn installed_stats_take_the_counts_and_the_thread_gets_its_own_back() {
        let _ = take();
        let mut sim = ThreadStats::default();
        installed(&mut sim, || {
            set_class(LockClass::MmapLock);
            count(Event::Sleep, 2);
        });
        count(Event::Sleep, 5);
        assert_eq!(sim.take().class(LockClass::MmapLock).get(Event::Sleep), 2);
        // The thread's own class was never changed by the installed context.
        assert_eq!(take().class(LockClass::AnonVma).get(Event::Sleep), 5);
    }
}
