//! Behaviour of the spinning kinds (spinlock, qspinlock, rwlock, qrwlock,
//! percpu-rwsem) through their public API: mutual exclusion under stress, who
//! gets in past a waiting writer, arrival order, and percpu slots.
//!
//! The ordering tests are deterministic: each waiter is confirmed queued or
//! spinning through the lock's own state before the next step, never by
//! sleeping.
#![cfg(not(shuttle))]

use rmap_storm::locks::percpu_rwsem::PercpuRwsem;
use rmap_storm::locks::qrwlock::Qrwlock;
use rmap_storm::locks::qspinlock::McsSpinlock;
use rmap_storm::locks::read_hold::ReadHold;
use rmap_storm::locks::rwlock::RwlockT;
use rmap_storm::locks::spinlock::TicketSpinlock;
use rmap_storm::locks::stats::{self, Event, LockClass};
use rmap_storm::locks::{KindInfo, RawRwLock};
use rmap_storm::torture::check::{Occupancy, Seen};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Poll `cond` until it holds; a hang becomes a named failure.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    // Generous: only a broken lock (or a wedged machine) takes this long.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        thread::yield_now();
    }
}

// ---------------------------------------------------------------------------
// Mutual exclusion under stress

/// Hold long enough for others to pile up behind (a few hundred ns).
fn linger() {
    for _ in 0..50 {
        std::hint::spin_loop();
    }
}

#[derive(Clone, Copy)]
enum Role {
    /// lock_exclusive and try_lock_exclusive in turn.
    Writer,
    /// lock_exclusive, then downgrade and hold as a reader.
    Downgrader,
    /// lock_shared, try_lock_shared and lock_shared_critical in turn.
    Reader,
}

fn read_hold<L: RawRwLock + KindInfo>(lock: &L, occ: &Occupancy, token: L::ReadToken) {
    let entered = occ.enter_read(L::SHARED_READERS);
    assert_eq!(entered, Seen::Ok, "a reader entered beside a holder");
    stay_and_unlock_shared(lock, occ, token);
}

/// A counted reader lingers, checks again, and releases.
fn stay_and_unlock_shared<L: RawRwLock + KindInfo>(lock: &L, occ: &Occupancy, token: L::ReadToken) {
    linger();
    let left = occ.exit_read(L::SHARED_READERS);
    assert_eq!(left, Seen::Ok, "a holder entered beside a reader");
    // SAFETY: the token came from `lock` and is released once.
    unsafe { lock.unlock_shared(token) };
}

fn write_hold<L: RawRwLock + KindInfo>(lock: &L, occ: &Occupancy, token: L::WriteToken) {
    assert_eq!(occ.enter_write(), Seen::Ok, "a writer entered while held");
    linger();
    assert_eq!(
        occ.exit_write(),
        Seen::Ok,
        "someone entered beside a writer"
    );
    // SAFETY: as above.
    unsafe { lock.unlock_exclusive(token) };
}

fn act<L: RawRwLock + KindInfo>(lock: &L, occ: &Occupancy, role: Role, i: usize) {
    match (role, i % 3) {
        (Role::Writer, 0) => {
            if let Some(t) = lock.try_lock_exclusive() {
                write_hold(lock, occ, t)
            }
        }
        (Role::Writer, _) => write_hold(lock, occ, lock.lock_exclusive()),
        (Role::Downgrader, _) => {
            let t = lock.lock_exclusive();
            assert_eq!(occ.enter_write(), Seen::Ok, "a writer entered while held");
            linger();
            assert_eq!(
                occ.write_to_read(),
                Seen::Ok,
                "someone entered beside a writer"
            );
            // SAFETY: the token came from `lock`.
            let t = unsafe { lock.downgrade(t) };
            let seen = occ.check_read(L::SHARED_READERS);
            assert_eq!(seen, Seen::Ok, "a downgraded holder met a writer");
            stay_and_unlock_shared(lock, occ, t);
        }
        (Role::Reader, 0) => read_hold(lock, occ, lock.lock_shared()),
        (Role::Reader, 1) => {
            if let Some(t) = lock.try_lock_shared() {
                read_hold(lock, occ, t)
            }
        }
        (Role::Reader, _) => read_hold(lock, occ, lock.lock_shared_critical()),
    }
}

/// Four threads (a writer, a downgrader, two readers) on one lock for about
/// 30 ms, each at least MIN_OPS operations; any overlap the kind forbids
/// panics inside a thread and fails the join.
fn stress<L: RawRwLock + KindInfo>() {
    // Enough rounds for every pair of roles to meet many times even when the
    // machine runs the threads one after another.
    const MIN_OPS: usize = 300;
    let lock = Arc::new(L::new());
    let occ = Arc::new(Occupancy::default());
    let deadline = Instant::now() + Duration::from_millis(30);
    let roles = [Role::Writer, Role::Downgrader, Role::Reader, Role::Reader];
    let threads: Vec<_> = roles
        .into_iter()
        .map(|role| {
            let (lock, occ) = (Arc::clone(&lock), Arc::clone(&occ));
            thread::spawn(move || {
                let mut i = 0;
                // Readers stop at the deadline, so a writer that rwlock_t
                // starves still finishes its rounds afterwards.
                while i < MIN_OPS || Instant::now() < deadline {
                    act(&*lock, &occ, role, i);
                    i += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a stress thread saw a forbidden overlap");
    }
    // Everyone left: a writer entering now finds nobody inside.
    assert_eq!(occ.enter_write().and(occ.exit_write()), Seen::Ok);
    let t = lock
        .try_lock_exclusive()
        .expect("lock free after the stress");
    // SAFETY: just granted.
    unsafe { lock.unlock_exclusive(t) };
}

#[test]
fn spinlock_excludes_under_stress() {
    stress::<TicketSpinlock>();
}

#[test]
fn qspinlock_excludes_under_stress() {
    stress::<McsSpinlock>();
}

#[test]
fn rwlock_excludes_writers_under_stress() {
    stress::<RwlockT>();
}

#[test]
fn qrwlock_excludes_writers_under_stress() {
    stress::<Qrwlock>();
}

#[test]
fn percpu_rwsem_excludes_writers_under_stress() {
    stress::<PercpuRwsem>();
}

// ---------------------------------------------------------------------------
// Arrival order of the spinlocks

/// Hold the lock, stage four waiters one at a time (each confirmed queued by
/// `queue_mark` changing before the next starts; odd ones ask to read), then
/// release: they must get in in the order they arrived. Each waiter also
/// reports one contended acquisition through the stats.
fn serves_in_arrival_order<L: RawRwLock + KindInfo>(queue_mark: fn(&L) -> usize) {
    const WAITERS: usize = 4;
    let lock = Arc::new(L::new());
    let order = Arc::new(Mutex::new(Vec::new()));
    let holder = lock.lock_exclusive();
    let mut mark = queue_mark(&lock);
    let mut threads = Vec::new();
    for i in 0..WAITERS {
        let (l, order) = (Arc::clone(&lock), Arc::clone(&order));
        threads.push(thread::spawn(move || {
            let _ = stats::take();
            if i % 2 == 1 {
                let t = l.lock_shared();
                order.lock().unwrap().push(i);
                // SAFETY: granted just above.
                unsafe { l.unlock_shared(t) };
            } else {
                let t = l.lock_exclusive();
                order.lock().unwrap().push(i);
                // SAFETY: granted just above.
                unsafe { l.unlock_exclusive(t) };
            }
            let s = stats::take();
            let c = s.class(LockClass::AnonVma);
            c.get(Event::ContendedRead) + c.get(Event::ContendedWrite)
        }));
        let before = mark;
        wait_until(&format!("waiter {i} is queued"), || {
            queue_mark(&lock) != before
        });
        mark = queue_mark(&lock);
    }
    // SAFETY: the holder's token, released once.
    unsafe { lock.unlock_exclusive(holder) };
    for t in threads {
        assert_eq!(t.join().unwrap(), 1, "each waiter was contended once");
    }
    assert_eq!(*order.lock().unwrap(), (0..WAITERS).collect::<Vec<_>>());
}

#[test]
fn ticket_spinlock_serves_in_arrival_order() {
    // Each arrival takes the next ticket: the tail moves.
    serves_in_arrival_order::<TicketSpinlock>(|l| usize::from(l.state().tail));
}

#[test]
fn qspinlock_serves_in_arrival_order() {
    // Each arrival becomes the queue's tail node.
    serves_in_arrival_order::<McsSpinlock>(|l| l.state().tail);
}

// ---------------------------------------------------------------------------
// A new reader while a writer waits

/// Hold a read; start a writer and wait until `writer_waits` confirms it is
/// spinning; then see what a third thread's reads get, and in which order
/// everyone got in. Returns (a try_lock_shared succeeded while the writer
/// waited, the writer got in before the third thread's lock_shared).
fn new_reader_while_writer_waits<L: RawRwLock + KindInfo>(
    writer_waits: fn(&L) -> bool,
    reader_queued: fn(&L) -> bool,
) -> (bool, bool) {
    let lock = Arc::new(L::new());
    let seq = Arc::new(AtomicUsize::new(0));
    let held = lock.lock_shared();

    let (l, s) = (Arc::clone(&lock), Arc::clone(&seq));
    let writer = thread::spawn(move || {
        let t = l.lock_exclusive();
        let at = s.fetch_add(1, Ordering::SeqCst);
        // SAFETY: granted just above.
        unsafe { l.unlock_exclusive(t) };
        at
    });
    wait_until("the writer is waiting", || writer_waits(&lock));

    let l = Arc::clone(&lock);
    let tried = thread::spawn(move || match l.try_lock_shared() {
        Some(t) => {
            // SAFETY: granted just above.
            unsafe { l.unlock_shared(t) };
            true
        }
        None => false,
    })
    .join()
    .unwrap();

    let (l, s) = (Arc::clone(&lock), Arc::clone(&seq));
    let reader = thread::spawn(move || {
        let t = l.lock_shared();
        let at = s.fetch_add(1, Ordering::SeqCst);
        // SAFETY: granted just above.
        unsafe { l.unlock_shared(t) };
        at
    });
    // The reader either got in (and released) past the waiting writer, or is
    // queued behind it: wait for one or the other before releasing our read.
    wait_until("the new reader got in or queued", || {
        seq.load(Ordering::SeqCst) == 1 || reader_queued(&lock)
    });
    assert!(writer_waits(&lock), "the writer still waits for our read");

    // SAFETY: our own read token, released once.
    unsafe { lock.unlock_shared(held) };
    let (w, r) = (writer.join().unwrap(), reader.join().unwrap());
    (tried, w < r)
}

#[test]
fn rwlock_admits_a_new_reader_while_a_writer_waits() {
    let (tried, writer_first) = new_reader_while_writer_waits::<RwlockT>(
        |l| l.writers_spinning() == 1,
        // rwlock_t has no reader queue: a reader that has not got in is
        // still on its way (the wait then ends when it does get in).
        |_| false,
    );
    assert!(tried, "try_lock_shared must pass a waiting rwlock_t writer");
    assert!(
        !writer_first,
        "lock_shared must pass a waiting rwlock_t writer"
    );
}

#[test]
fn qrwlock_queues_a_new_reader_behind_a_waiting_writer() {
    let (tried, writer_first) = new_reader_while_writer_waits::<Qrwlock>(
        // The writer holds wait_lock and has announced itself.
        |l| l.state().writer_waiting,
        // The reader queues on wait_lock behind the writer.
        |l| l.wait_queue().state().tail != 0,
    );
    assert!(!tried, "try_lock_shared must not pass a waiting writer");
    assert!(
        writer_first,
        "a new reader must queue behind a waiting writer"
    );
}

// ---------------------------------------------------------------------------
// percpu-rwsem

#[test]
fn percpu_readers_on_different_threads_use_different_slots() {
    const READERS: usize = 4;
    let lock = Arc::new(<PercpuRwsem>::new());
    let all_in = Arc::new(Barrier::new(READERS + 1));
    let done = Arc::new(Barrier::new(READERS + 1));
    let threads: Vec<_> = (0..READERS)
        .map(|_| {
            let (l, all_in, done) = (Arc::clone(&lock), Arc::clone(&all_in), Arc::clone(&done));
            thread::spawn(move || {
                let token = l.lock_shared();
                let ReadHold::Shared(slot) = token else {
                    panic!("a plain read is a shared hold")
                };
                all_in.wait();
                done.wait();
                // SAFETY: granted above.
                unsafe { l.unlock_shared(token) };
                slot
            })
        })
        .collect();
    all_in.wait();
    // All four hold at once, each counted in its own slot and nowhere else.
    let state = lock.state();
    done.wait();
    let slots: BTreeSet<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    // Threads are numbered in first-use order and this test binary starts
    // far fewer than SLOTS percpu readers, so four threads get four slots.
    assert_eq!(slots.len(), READERS, "slots {slots:?}");
    assert_eq!(state.readers, READERS);
    assert_eq!(state.busy_slots, READERS);
}

#[test]
fn percpu_writer_blocks_new_readers_and_waits_for_old_ones() {
    let lock = Arc::new(<PercpuRwsem>::new());
    let entered = Arc::new(AtomicBool::new(false));
    let held = lock.lock_shared();
    let (l, e) = (Arc::clone(&lock), Arc::clone(&entered));
    let writer = thread::spawn(move || {
        l.lock_exclusive();
        e.store(true, Ordering::SeqCst);
        // SAFETY: granted just above (the token is `()`).
        unsafe { l.unlock_exclusive(()) };
    });
    wait_until("the writer blocks readers", || lock.state().blocked);
    let l = Arc::clone(&lock);
    let tried = thread::spawn(move || l.try_lock_shared().is_some())
        .join()
        .unwrap();
    assert!(!tried, "a new reader got in past a draining writer");
    assert!(
        !entered.load(Ordering::SeqCst),
        "the writer did not wait for our read"
    );
    assert_eq!(
        lock.state().readers,
        1,
        "the failed reader took its count back"
    );
    // SAFETY: our read token, released once.
    unsafe { lock.unlock_shared(held) };
    writer.join().unwrap();
    assert!(entered.load(Ordering::SeqCst));
}

#[test]
fn percpu_readers_see_the_writer_and_wait_in_the_queue() {
    let lock = Arc::new(<PercpuRwsem>::new());
    let entered = Arc::new(AtomicBool::new(false));
    lock.lock_exclusive();
    let (l, e) = (Arc::clone(&lock), Arc::clone(&entered));
    let reader = thread::spawn(move || {
        let _ = stats::take();
        let t = l.lock_shared();
        e.store(true, Ordering::SeqCst);
        // SAFETY: granted just above.
        unsafe { l.unlock_shared(t) };
        stats::take()
            .class(LockClass::AnonVma)
            .get(Event::ContendedRead)
    });
    wait_until("the reader queues behind the writer", || {
        lock.wait_queue().state().tail != 0
    });
    assert!(!entered.load(Ordering::SeqCst));
    assert_eq!(
        lock.state().readers,
        0,
        "the blocked reader took its count back"
    );
    // SAFETY: our write hold (token `()`), released once.
    unsafe { lock.unlock_exclusive(()) };
    assert_eq!(reader.join().unwrap(), 1, "the reader took the slow path");
    assert!(entered.load(Ordering::SeqCst));
}
