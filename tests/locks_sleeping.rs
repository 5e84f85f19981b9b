//! Behaviour tests for the sleeping kinds: rwsem-fifo, rwsem-xadd, rwsem,
//! mutex, percpu-rwsem.
//!
//! Each scenario stages its waiters one at a time and confirms each is parked
//! (the lock's `queued()` count) before starting the next, so queue order is
//! known on a loaded machine. Grants made by a releaser are checked right after
//! the release returns: the releaser makes them before it returns, so those
//! checks do not race. Waits have a generous timeout and fail with a message
//! instead of hanging. What the test thread holds is a [`Held`], released
//! when it is dropped, inside the scope of the actors: a failed assertion
//! unwinds through the release, the actors parked behind it get in and
//! leave, and the test fails alone instead of hanging the binary. Every
//! behaviour test fails on a lock that lacks the behaviour (noted per test).

mod locks_stress;

use rmap_storm::locks::mutex::Mutex;
use rmap_storm::locks::percpu_rwsem::PercpuRwsem;
use rmap_storm::locks::rwsem::Rwsem;
use rmap_storm::locks::rwsem_fifo::RwsemFifo;
use rmap_storm::locks::rwsem_xadd::RwsemXadd;
use rmap_storm::locks::stats::{self, Event, LockClass};
use rmap_storm::locks::{KindInfo, RawRwLock};
use std::collections::BTreeSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(10);

/// Ends the process if the test is still running after twice PATIENCE: the
/// last resort against a lock that loses a wake-up of an actor the scope
/// must join (a failed assertion no longer hangs: see [`Held`]).
struct Watchdog {
    _cancel: Sender<()>,
}

fn watchdog(test: &'static str) -> Watchdog {
    let (tx, rx) = channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(2 * PATIENCE) {
            // Straight to stderr: the harness's capture would drop eprintln!.
            let _ = writeln!(
                std::io::stderr(),
                "{test}: stuck, probably after a failed assertion (rerun with --nocapture)"
            );
            std::process::exit(101);
        }
    });
    Watchdog { _cancel: tx }
}

/// Poll `cond` until true; fail naming `what` after PATIENCE.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// The test-visible queue length, common to the three kinds.
trait Queued: RawRwLock<ReadToken = (), WriteToken = ()> {
    fn queued_now(&self) -> usize;
    fn readers_now(&self) -> usize;
}

impl Queued for RwsemFifo {
    fn queued_now(&self) -> usize {
        self.queued()
    }
    fn readers_now(&self) -> usize {
        self.readers()
    }
}

impl Queued for Rwsem {
    fn queued_now(&self) -> usize {
        self.queued()
    }
    fn readers_now(&self) -> usize {
        self.readers()
    }
}

impl Queued for RwsemXadd {
    fn queued_now(&self) -> usize {
        self.queued()
    }
    fn readers_now(&self) -> usize {
        self.readers()
    }
}

impl Queued for Mutex {
    fn queued_now(&self) -> usize {
        self.queued()
    }
    fn readers_now(&self) -> usize {
        0
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Read,
    Write,
    Critical,
}

/// A hold of the test's own thread, released when dropped (also while a
/// failed assertion unwinds), so the actors parked behind it can finish.
struct Held<'a, L: Queued> {
    lock: &'a L,
    /// The mode held; None once released.
    mode: Option<Op>,
}

impl<'a, L: Queued> Held<'a, L> {
    fn read(lock: &'a L) -> Self {
        lock.lock_shared();
        Held {
            lock,
            mode: Some(Op::Read),
        }
    }

    fn write(lock: &'a L) -> Self {
        lock.lock_exclusive();
        Held {
            lock,
            mode: Some(Op::Write),
        }
    }

    /// downgrade_write: the hold becomes a read.
    fn downgrade(&mut self) {
        assert_eq!(self.mode, Some(Op::Write), "only a write hold downgrades");
        // SAFETY: this thread holds the lock for write.
        unsafe { self.lock.downgrade(()) };
        self.mode = Some(Op::Read);
    }

    fn release(mut self) {
        self.unlock();
    }

    fn unlock(&mut self) {
        // SAFETY: this thread took the lock in this mode and releases once.
        match self.mode.take() {
            Some(Op::Write) => unsafe { self.lock.unlock_exclusive(()) },
            Some(Op::Read | Op::Critical) => unsafe { self.lock.unlock_shared(()) },
            None => {}
        }
    }
}

impl<L: Queued> Drop for Held<'_, L> {
    fn drop(&mut self) {
        self.unlock();
    }
}

/// A thread that takes the lock with `op`, reports it, and releases when told
/// (or at once, for a pass-through actor).
struct Actor<'s> {
    got: Receiver<()>,
    release: Sender<()>,
    handle: ScopedJoinHandle<'s, ()>,
}

impl Actor<'_> {
    fn has_lock(&self) -> bool {
        self.got.try_recv().is_ok()
    }

    fn wait_lock(&self, name: &str) {
        self.got
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("{name} never got the lock"));
    }

    /// Let it release once it has the lock.
    fn release(&self) {
        let _ = self.release.send(());
    }

    fn join(self) {
        self.handle.join().expect("actor panicked");
    }

    fn finish(self) {
        self.release();
        self.join();
    }
}

fn spawn<'s, L: Queued>(
    s: &'s Scope<'s, '_>,
    lock: &'s L,
    op: Op,
    hold: bool,
    log: &'s std::sync::Mutex<Vec<&'static str>>,
    name: &'static str,
) -> Actor<'s> {
    let (got_tx, got) = channel();
    let (release, release_rx) = channel::<()>();
    let handle = s.spawn(move || {
        match op {
            Op::Write => lock.lock_exclusive(),
            Op::Read => lock.lock_shared(),
            Op::Critical => lock.lock_shared_critical(),
        }
        log.lock().unwrap().push(name);
        let _ = got_tx.send(());
        if hold {
            let _ = release_rx.recv();
        }
        // SAFETY: this thread acquired it just above, in this mode.
        unsafe {
            match op {
                Op::Write => lock.unlock_exclusive(()),
                Op::Read | Op::Critical => lock.unlock_shared(()),
            }
        }
    });
    Actor {
        got,
        release,
        handle,
    }
}

/// Spawn an actor and wait until it is parked (the queue grew to `queued`).
fn stage<'s, L: Queued>(
    s: &'s Scope<'s, '_>,
    lock: &'s L,
    op: Op,
    hold: bool,
    log: &'s std::sync::Mutex<Vec<&'static str>>,
    name: &'static str,
    queued: usize,
) -> Actor<'s> {
    let actor = spawn(s, lock, op, hold, log, name);
    wait_until(&format!("{name} is queued"), || {
        assert!(
            !actor.has_lock(),
            "{name} entered instead of queuing ({:?})",
            log.lock().unwrap()
        );
        lock.queued_now() == queued
    });
    actor
}

// ---------------------------------------------------------------- stress

fn stress<L: RawRwLock + KindInfo>() {
    let report = locks_stress::stress::<L>();
    if let Err(e) = report.check(L::KIND.name()) {
        panic!("{e}");
    }
}

#[test]
fn rwsem_fifo_mutual_exclusion_stress() {
    let _watchdog = watchdog("rwsem_fifo_mutual_exclusion_stress");
    stress::<RwsemFifo>();
}

#[test]
fn rwsem_xadd_mutual_exclusion_stress() {
    let _watchdog = watchdog("rwsem_xadd_mutual_exclusion_stress");
    stress::<RwsemXadd>();
}

#[test]
fn rwsem_mutual_exclusion_stress() {
    let _watchdog = watchdog("rwsem_mutual_exclusion_stress");
    stress::<Rwsem>();
}

#[test]
fn mutex_mutual_exclusion_stress() {
    let _watchdog = watchdog("mutex_mutual_exclusion_stress");
    stress::<Mutex>();
}

#[test]
fn percpu_rwsem_mutual_exclusion_stress() {
    let _watchdog = watchdog("percpu_rwsem_mutual_exclusion_stress");
    stress::<PercpuRwsem>();
}

// ---------------------------------------------------------------- writer-fair readers

/// Readers hold, a writer queues, then a new reader must queue behind it and
/// enter only after it. Fails on a reader-preferring lock (the new reader
/// enters at once).
fn new_reader_queues_behind_a_waiting_writer<L: Queued>() {
    let lock = L::new();
    let log = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let held = Held::read(&lock);
        let w = stage(s, &lock, Op::Write, true, &log, "W", 1);
        assert!(
            lock.try_lock_shared().is_none(),
            "try_read passed a waiting writer"
        );
        let r = stage(s, &lock, Op::Read, true, &log, "R", 2);
        held.release();
        w.wait_lock("W");
        assert_eq!(
            lock.queued_now(),
            1,
            "the reader should still wait behind W"
        );
        w.finish();
        r.wait_lock("R");
        r.finish();
    });
    assert_eq!(*log.lock().unwrap(), ["W", "R"]);
}

#[test]
fn rwsem_fifo_new_reader_queues_behind_a_waiting_writer() {
    let _watchdog = watchdog("rwsem_fifo_new_reader_queues_behind_a_waiting_writer");
    new_reader_queues_behind_a_waiting_writer::<RwsemFifo>();
}

#[test]
fn rwsem_xadd_new_reader_queues_behind_a_waiting_writer() {
    let _watchdog = watchdog("rwsem_xadd_new_reader_queues_behind_a_waiting_writer");
    new_reader_queues_behind_a_waiting_writer::<RwsemXadd>();
}

#[test]
fn rwsem_new_reader_queues_behind_a_waiting_writer() {
    let _watchdog = watchdog("rwsem_new_reader_queues_behind_a_waiting_writer");
    new_reader_queues_behind_a_waiting_writer::<Rwsem>();
}

// ---------------------------------------------------------------- reader batches

/// Queue R1 R2 W R3 behind a writer and release: returns how many readers
/// the release granted at once, how many stayed queued, and the order in
/// which all four then got the lock.
fn release_onto_r_r_w_r<L: Queued>() -> (usize, usize, Vec<&'static str>) {
    let lock = L::new();
    let log = std::sync::Mutex::new(Vec::new());
    let mut granted = (0, 0);
    std::thread::scope(|s| {
        let held = Held::write(&lock);
        let actors = [
            (Op::Read, "R1"),
            (Op::Read, "R2"),
            (Op::Write, "W"),
            (Op::Read, "R3"),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(op, name))| stage(s, &lock, op, true, &log, name, i + 1))
        .collect::<Vec<_>>();
        held.release();
        // The release granted before returning; the grantees hold until told.
        granted = (lock.readers_now(), lock.queued_now());
        for a in &actors {
            a.release();
        }
        for a in actors {
            a.join();
        }
    });
    let log = log.lock().unwrap().clone();
    (granted.0, granted.1, log)
}

/// 2007: only the contiguous head readers (R1 R2), then W, then R3.
/// Fails on a phase-fair wake (it would grant R3 with them).
#[test]
fn rwsem_fifo_release_wakes_only_the_contiguous_head_readers() {
    let _watchdog = watchdog("rwsem_fifo_release_wakes_only_the_contiguous_head_readers");
    let (readers, queued, log) = release_onto_r_r_w_r::<RwsemFifo>();
    assert_eq!((readers, queued), (2, 2), "granted readers / still queued");
    assert_eq!(log[2..], ["W", "R3"]);
}

/// 2015 (rwsem-xadd): the head readers too, "an infinite number of read
/// locks to the readers at the front of the queue". Fails on a phase-fair
/// wake.
#[test]
fn rwsem_xadd_release_wakes_only_the_contiguous_head_readers() {
    let _watchdog = watchdog("rwsem_xadd_release_wakes_only_the_contiguous_head_readers");
    let (readers, queued, log) = release_onto_r_r_w_r::<RwsemXadd>();
    assert_eq!((readers, queued), (2, 2), "granted readers / still queued");
    assert_eq!(log[2..], ["W", "R3"]);
}

/// Today: the first waiter is a reader, so every queued reader (up to 256)
/// is woken, past the queued writer. Fails on a contiguous-only wake.
#[test]
fn rwsem_release_wakes_queued_readers_past_a_queued_writer() {
    let _watchdog = watchdog("rwsem_release_wakes_queued_readers_past_a_queued_writer");
    let (readers, queued, log) = release_onto_r_r_w_r::<Rwsem>();
    assert_eq!((readers, queued), (3, 1), "granted readers / still queued");
    assert_eq!(log.last(), Some(&"W"));
}

// ---------------------------------------------------------------- read_critical

/// Readers hold and a writer queues: a critical reader enters at once, a
/// plain one does not. Fails if read_critical behaves as read.
fn critical_reader_passes_a_queued_writer<L: Queued>() {
    let lock = L::new();
    let log = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let held = Held::read(&lock);
        let w = stage(s, &lock, Op::Write, true, &log, "W", 1);
        let c = spawn(s, &lock, Op::Critical, true, &log, "C");
        c.wait_lock("C (critical)");
        assert_eq!((lock.readers_now(), lock.queued_now()), (2, 1));
        held.release();
        c.finish();
        w.wait_lock("W");
        w.finish();
    });
    assert_eq!(*log.lock().unwrap(), ["C", "W"]);
}

#[test]
fn rwsem_fifo_read_critical_enters_past_a_queued_writer_while_readers_hold() {
    let _watchdog =
        watchdog("rwsem_fifo_read_critical_enters_past_a_queued_writer_while_readers_hold");
    critical_reader_passes_a_queued_writer::<RwsemFifo>();
}

#[test]
fn rwsem_xadd_read_critical_enters_past_a_queued_writer_while_readers_hold() {
    let _watchdog =
        watchdog("rwsem_xadd_read_critical_enters_past_a_queued_writer_while_readers_hold");
    critical_reader_passes_a_queued_writer::<RwsemXadd>();
}

#[test]
fn rwsem_read_critical_enters_past_a_queued_writer_while_readers_hold() {
    let _watchdog = watchdog("rwsem_read_critical_enters_past_a_queued_writer_while_readers_hold");
    critical_reader_passes_a_queued_writer::<Rwsem>();
}

#[test]
fn read_critical_counts_a_critical_pass() {
    let _watchdog = watchdog("read_critical_counts_a_critical_pass");
    let lock = Rwsem::new();
    let log = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let held = Held::read(&lock);
        let w = stage(s, &lock, Op::Write, true, &log, "W", 1);
        let _ = stats::take();
        lock.lock_shared_critical();
        let passes = stats::take()
            .class(LockClass::AnonVma)
            .get(Event::CriticalPass);
        // SAFETY: taken above by this thread.
        unsafe { lock.unlock_shared(()) };
        held.release();
        assert_eq!(passes, 1);
        w.wait_lock("W");
        w.finish();
    });
}

// ---------------------------------------------------------------- downgrade

/// Downgrade with `queue` parked behind the writer; returns (readers now,
/// still queued) right after the downgrade returns.
fn downgrade_onto<L: Queued>(queue: &[(Op, &'static str)]) -> (usize, usize) {
    let lock = L::new();
    let log = std::sync::Mutex::new(Vec::new());
    let mut after = (0, 0);
    std::thread::scope(|s| {
        let mut held = Held::write(&lock);
        let actors: Vec<_> = queue
            .iter()
            .enumerate()
            .map(|(i, &(op, name))| stage(s, &lock, op, true, &log, name, i + 1))
            .collect();
        held.downgrade();
        // The grantees hold until released, so these counts are stable.
        after = (lock.readers_now(), lock.queued_now());
        held.release();
        for a in &actors {
            a.release();
        }
        for a in actors {
            a.join();
        }
    });
    after
}

/// Today: downgrade_write wakes the queued readers (past the writer) when a
/// reader is first, and nobody when a writer is first.
#[test]
fn rwsem_downgrade_wakes_readers_only() {
    let _watchdog = watchdog("rwsem_downgrade_wakes_readers_only");
    let (r, w) = ((Op::Read, "R"), (Op::Write, "W"));
    assert_eq!(downgrade_onto::<Rwsem>(&[r, w, (Op::Read, "R2")]), (3, 1));
    assert_eq!(downgrade_onto::<Rwsem>(&[w, r]), (1, 2));
}

/// 2015: the contiguous head readers, as in 2007.
#[test]
fn rwsem_xadd_downgrade_wakes_the_contiguous_head_readers() {
    let _watchdog = watchdog("rwsem_xadd_downgrade_wakes_the_contiguous_head_readers");
    let (r, w) = ((Op::Read, "R"), (Op::Write, "W"));
    assert_eq!(
        downgrade_onto::<RwsemXadd>(&[r, w, (Op::Read, "R2")]),
        (2, 2)
    );
    assert_eq!(downgrade_onto::<RwsemXadd>(&[w, r]), (1, 2));
}

/// 2007: the contiguous head readers only.
#[test]
fn rwsem_fifo_downgrade_wakes_the_contiguous_head_readers() {
    let _watchdog = watchdog("rwsem_fifo_downgrade_wakes_the_contiguous_head_readers");
    let (r, w) = ((Op::Read, "R"), (Op::Write, "W"));
    assert_eq!(
        downgrade_onto::<RwsemFifo>(&[r, w, (Op::Read, "R2")]),
        (2, 2)
    );
    assert_eq!(downgrade_onto::<RwsemFifo>(&[w, r]), (1, 2));
}

// ---------------------------------------------------------------- stealing and handoff

/// Hold, let a writer queue, release and re-take at once: returns the events
/// this thread counted for the release and re-take, and how long the waiter
/// could have waited at most by the release.
fn release_then_retake<L: Queued>(age_first: Duration) -> (u64, u64, bool, Duration) {
    let lock = L::new();
    let log = std::sync::Mutex::new(Vec::new());
    let mut out = (0, 0, false, Duration::ZERO);
    std::thread::scope(|s| {
        let held = Held::write(&lock);
        let born = Instant::now();
        let w = stage(s, &lock, Op::Write, false, &log, "W", 1);
        std::thread::sleep(age_first);
        let _ = stats::take();
        let max_age = born.elapsed();
        held.release();
        let retook = lock.try_lock_exclusive().is_some() || {
            lock.lock_exclusive();
            true
        };
        let st = stats::take();
        let c = st.class(LockClass::AnonVma);
        out = (c.get(Event::Handoff), c.get(Event::Steal), retook, max_age);
        // SAFETY: re-taken just above.
        unsafe { lock.unlock_exclusive(()) };
        w.finish();
    });
    out
}

/// After RWSEM_WAIT_TIMEOUT (4 ms) the first waiter is starved: the release
/// hands it the lock, so the releaser's immediate re-take cannot steal it.
/// Fails on an rwsem without handoff (the releaser would steal or find the
/// lock free).
#[test]
fn rwsem_after_the_handoff_timeout_no_writer_steals() {
    let _watchdog = watchdog("rwsem_after_the_handoff_timeout_no_writer_steals");
    let lock = Rwsem::new();
    let log = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let held = Held::write(&lock);
        let w = stage(s, &lock, Op::Write, true, &log, "W", 1);
        // Age the waiter past the 4 ms timeout.
        std::thread::sleep(Duration::from_millis(5));
        let _ = stats::take();
        held.release();
        let stolen = lock.try_lock_exclusive();
        let handed_over = lock.write_locked();
        let handoffs = stats::take().class(LockClass::AnonVma).get(Event::Handoff);
        if stolen.is_some() {
            // SAFETY: just taken; released before the assertion below.
            unsafe { lock.unlock_exclusive(()) };
        }
        assert!(stolen.is_none(), "a newcomer stole from a starved waiter");
        assert!(handed_over, "the release should have handed the lock over");
        assert_eq!(handoffs, 1);
        w.wait_lock("W");
        w.finish();
    });
}

/// Before the timeout a release only wakes the first writer: no handoff, and
/// a running writer may steal the lock from it. Stealing depends on timing
/// (the woken writer must not have run yet), so this retries a bounded number
/// of rounds; a lock that never lets a writer jump the queue fails.
fn writers_steal_before_handoff<L: Queued>() {
    const ROUNDS: usize = 50;
    let mut steals = 0;
    for _ in 0..ROUNDS {
        let (handoffs, stole, retook, max_age) = release_then_retake::<L>(Duration::ZERO);
        assert!(retook);
        if max_age < Duration::from_millis(3) {
            assert_eq!(handoffs, 0, "a young waiter was handed the lock");
        }
        steals += stole;
        if steals > 0 {
            break;
        }
    }
    assert!(steals > 0, "no steal in {ROUNDS} release/re-take rounds");
}

#[test]
fn rwsem_writers_steal_before_the_handoff_timeout() {
    let _watchdog = watchdog("rwsem_writers_steal_before_the_handoff_timeout");
    writers_steal_before_handoff::<Rwsem>();
}

#[test]
fn rwsem_xadd_writers_steal_from_a_woken_waiter() {
    let _watchdog = watchdog("rwsem_xadd_writers_steal_from_a_woken_waiter");
    writers_steal_before_handoff::<RwsemXadd>();
}

#[test]
fn mutex_lockers_steal_from_a_woken_waiter() {
    let _watchdog = watchdog("mutex_lockers_steal_from_a_woken_waiter");
    writers_steal_before_handoff::<Mutex>();
}

/// The 2007 rwsem hands every release to the head: the releaser can never
/// re-take ahead of it.
#[test]
fn rwsem_fifo_never_lets_the_releaser_jump_the_queue() {
    let _watchdog = watchdog("rwsem_fifo_never_lets_the_releaser_jump_the_queue");
    for _ in 0..5 {
        let (handoffs, steals, _, _) = release_then_retake::<RwsemFifo>(Duration::ZERO);
        assert_eq!((handoffs, steals), (1, 0));
    }
}

// ---------------------------------------------------------------- mutex order

/// Sleepers are woken one at a time in arrival order. Fails on a LIFO or
/// wake-all mutex.
#[test]
fn mutex_wakes_sleepers_in_fifo_order() {
    let _watchdog = watchdog("mutex_wakes_sleepers_in_fifo_order");
    let lock = Mutex::new();
    let log = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let held = Held::write(&lock);
        let names = ["W1", "W2", "W3", "W4"];
        let actors: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, &n)| stage(s, &lock, Op::Write, false, &log, n, i + 1))
            .collect();
        held.release();
        for a in actors {
            a.finish();
        }
    });
    assert_eq!(*log.lock().unwrap(), ["W1", "W2", "W3", "W4"]);
}

/// A mutex read is exclusive: a second reader waits.
#[test]
fn mutex_reads_exclude_each_other() {
    let _watchdog = watchdog("mutex_reads_exclude_each_other");
    let lock = Mutex::new();
    let log = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let held = Held::read(&lock);
        assert!(lock.try_lock_shared().is_none());
        let r = stage(s, &lock, Op::Read, false, &log, "R", 1);
        held.release();
        r.finish();
    });
    assert_eq!(*log.lock().unwrap(), ["R"]);
}

// ---------------------------------------------------------------- percpu-rwsem

#[test]
fn percpu_readers_on_different_threads_use_different_slots() {
    const READERS: usize = 4;
    let lock = Arc::new(<PercpuRwsem>::new());
    let all_in = Arc::new(Barrier::new(READERS + 1));
    let done = Arc::new(Barrier::new(READERS + 1));
    let threads: Vec<_> = (0..READERS)
        .map(|_| {
            let (l, all_in, done) = (Arc::clone(&lock), Arc::clone(&all_in), Arc::clone(&done));
            std::thread::spawn(move || {
                let token = l.lock_shared();
                all_in.wait();
                done.wait();
                // SAFETY: granted above.
                unsafe { l.unlock_shared(token) };
            })
        })
        .collect();
    all_in.wait();
    // All four hold at once, each counted in its own slot and nowhere else.
    let state = lock.state();
    let busy: BTreeSet<usize> = (0..rmap_storm::locks::percpu_rwsem::SLOTS)
        .filter(|&i| lock.readers_in_slot(i) != 0)
        .collect();
    done.wait();
    for t in threads {
        t.join().unwrap();
    }
    // Threads are numbered in first-use order and this test binary starts
    // far fewer than SLOTS percpu readers, so four threads get four slots.
    assert_eq!(busy.len(), READERS, "slots {busy:?}");
    assert_eq!(state.readers, READERS);
    assert_eq!(state.busy_slots, READERS);
}

/// A writer sets `block` and sleeps until the reader inside leaves; a new
/// reader cannot get in meanwhile. Fails on a writer that does not wait
/// for readers or does not block new ones.
#[test]
fn percpu_writer_blocks_new_readers_and_waits_for_old_ones() {
    let _watchdog = watchdog("percpu_writer_blocks_new_readers_and_waits_for_old_ones");
    let lock = Arc::new(<PercpuRwsem>::new());
    let entered = Arc::new(AtomicBool::new(false));
    let held = lock.lock_shared();
    let (l, e) = (Arc::clone(&lock), Arc::clone(&entered));
    let writer = std::thread::spawn(move || {
        l.lock_exclusive();
        e.store(true, Ordering::SeqCst);
        // SAFETY: granted just above (the token is `()`).
        unsafe { l.unlock_exclusive(()) };
    });
    wait_until("the writer drains readers", || lock.writer_draining());
    let l = Arc::clone(&lock);
    let tried = std::thread::spawn(move || match l.try_lock_shared() {
        Some(t) => {
            // SAFETY: granted just above.
            unsafe { l.unlock_shared(t) };
            true
        }
        None => false,
    })
    .join()
    .unwrap();
    let (blocked, entered_early, readers) = (
        lock.state().blocked,
        entered.load(Ordering::SeqCst),
        lock.state().readers,
    );
    // SAFETY: our read token, released once (before the assertions).
    unsafe { lock.unlock_shared(held) };
    writer.join().unwrap();
    assert!(
        blocked && !tried,
        "a new reader got in past a draining writer"
    );
    assert!(!entered_early, "the writer did not wait for our read");
    assert_eq!(readers, 1, "the failed reader took its count back");
    assert!(entered.load(Ordering::SeqCst));
}

/// A reader that finds `block` set sleeps in the FIFO and is let in by the
/// writer's release. Fails on a reader that spins or enters.
#[test]
fn percpu_readers_sleep_behind_the_writer() {
    let _watchdog = watchdog("percpu_readers_sleep_behind_the_writer");
    let lock = Arc::new(<PercpuRwsem>::new());
    let entered = Arc::new(AtomicBool::new(false));
    lock.lock_exclusive();
    let (l, e) = (Arc::clone(&lock), Arc::clone(&entered));
    let reader = std::thread::spawn(move || {
        let _ = stats::take();
        let t = l.lock_shared();
        e.store(true, Ordering::SeqCst);
        // SAFETY: granted just above.
        unsafe { l.unlock_shared(t) };
        let s = stats::take();
        let c = s.class(LockClass::AnonVma);
        (c.get(Event::ContendedRead), c.get(Event::Sleep))
    });
    wait_until("the reader sleeps behind the writer", || lock.queued() == 1);
    let (entered_early, readers) = (entered.load(Ordering::SeqCst), lock.state().readers);
    // SAFETY: our write hold (token `()`), released once.
    unsafe { lock.unlock_exclusive(()) };
    let (contended, sleeps) = reader.join().unwrap();
    assert!(!entered_early, "the reader got in past the writer");
    assert_eq!(readers, 0, "the blocked reader took its count back");
    assert_eq!(
        (contended, sleeps),
        (1, 1),
        "(slow paths, sleeps) of the reader"
    );
    assert!(entered.load(Ordering::SeqCst));
}

/// A writer's down_write right after another's up_write (within a grace
/// period) waits no grace period; readers stay off their fast path.
#[test]
fn percpu_the_first_writer_waits_a_grace_period_and_the_next_does_not() {
    let lock = <PercpuRwsem>::new();
    let _ = stats::take();
    lock.lock_exclusive();
    // SAFETY: granted just above.
    unsafe { lock.unlock_exclusive(()) };
    lock.lock_exclusive();
    // SAFETY: granted just above.
    unsafe { lock.unlock_exclusive(()) };
    let gps = stats::take()
        .class(LockClass::AnonVma)
        .get(Event::GracePeriod);
    assert_eq!(gps, 1, "grace periods waited by two writers in a row");
}
