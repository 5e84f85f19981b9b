//! Behaviour of the spinning kinds (tas, spinlock, qspinlock, rwlock,
//! qrwlock) through their public API: mutual exclusion under stress, who
//! gets in past a waiting writer, and arrival order.
//!
//! The ordering tests are deterministic: each waiter is confirmed queued or
//! spinning through the lock's own state before the next step, never by
//! sleeping.
#![cfg(not(shuttle))]

mod locks_stress;

use rmap_storm::locks::qrwlock::Qrwlock;
use rmap_storm::locks::qspinlock::McsSpinlock;
use rmap_storm::locks::rwlock::RwlockT;
use rmap_storm::locks::spinlock::TicketSpinlock;
use rmap_storm::locks::stats::{self, Event, LockClass};
use rmap_storm::locks::tas::TasSpinlock;
use rmap_storm::locks::{KindInfo, RawRwLock};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
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

fn stress<L: RawRwLock + KindInfo>() {
    let report = locks_stress::stress::<L>();
    if let Err(e) = report.check(L::KIND.name()) {
        panic!("{e}");
    }
}

#[test]
fn tas_excludes_under_stress() {
    stress::<TasSpinlock>();
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

// ---------------------------------------------------------------------------
// Arrival order of the spinlocks

/// Hold the lock and stage `WAITERS` waiters one at a time (each confirmed
/// queued by `queue_mark` changing before the next starts; odd ones ask to
/// read), then let them in one at a time: each reports when it has the lock
/// and holds it until told to go. Exactly the next waiter in arrival order
/// must be the one inside, for every waiter, in each of `ROUNDS` rounds.
/// Returns what went wrong, after every waiter that got in has left.
fn serves_in_arrival_order<L: RawRwLock + KindInfo>(
    queue_mark: fn(&L) -> usize,
) -> Result<(), String> {
    const WAITERS: usize = 8;
    const ROUNDS: usize = 3;
    let lock = Arc::new(L::new());
    for round in 0..ROUNDS {
        let holder = lock.lock_exclusive();
        let (entered_tx, entered) = channel::<usize>();
        let mut go = Vec::new();
        let mut mark = queue_mark(&lock);
        for i in 0..WAITERS {
            let (l, entered_tx) = (Arc::clone(&lock), entered_tx.clone());
            let (go_tx, go_rx) = channel::<()>();
            go.push(go_tx);
            thread::spawn(move || {
                let _ = stats::take();
                let read = i % 2 == 1;
                let token = if read {
                    Ok(l.lock_shared())
                } else {
                    Err(l.lock_exclusive())
                };
                let contended = {
                    let s = stats::take();
                    let c = s.class(LockClass::AnonVma);
                    c.get(Event::ContendedRead) + c.get(Event::ContendedWrite)
                };
                let _ = entered_tx.send(if contended == 1 { i } else { usize::MAX });
                let _ = go_rx.recv();
                // SAFETY: granted just above, released once in its mode.
                unsafe {
                    match token {
                        Ok(t) => l.unlock_shared(t),
                        Err(t) => l.unlock_exclusive(t),
                    }
                }
            });
            let before = mark;
            wait_until(&format!("waiter {i} is queued"), || {
                queue_mark(&lock) != before
            });
            mark = queue_mark(&lock);
        }
        // SAFETY: the holder's token, released once.
        unsafe { lock.unlock_exclusive(holder) };
        for (next, this) in go.iter().enumerate() {
            let got = entered
                .recv_timeout(Duration::from_secs(10))
                .map_err(|_| format!("round {round}: waiter {next} never got the lock"))?;
            // Nobody else may get in while it holds.
            let also = entered.recv_timeout(Duration::from_millis(2)).ok();
            let _ = this.send(());
            if got != next || also.is_some() {
                // Let everyone still queued through before reporting.
                for g in &go {
                    let _ = g.send(());
                }
                return Err(format!(
                    "round {round}: waiter {got} got the lock when {next} was next (also inside: {also:?}; {} marks a waiter that was not contended once)",
                    usize::MAX
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn ticket_spinlock_serves_in_arrival_order() {
    // Each arrival takes the next ticket: the tail moves.
    serves_in_arrival_order::<TicketSpinlock>(|l| usize::from(l.state().tail)).unwrap();
}

#[test]
fn qspinlock_serves_in_arrival_order() {
    // Each arrival becomes the queue's tail node.
    serves_in_arrival_order::<McsSpinlock>(|l| l.state().tail).unwrap();
}

/// The control: tas grants in any order, and the same check says so.
#[test]
fn tas_fails_the_arrival_order_check() {
    // Each arrival's failed decrement takes one more off the word.
    let r = serves_in_arrival_order::<TasSpinlock>(|l| l.failed_attempts() as usize);
    assert!(
        r.is_err(),
        "tas served eight waiters in arrival order three times"
    );
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
