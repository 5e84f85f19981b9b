//! The checker's negative control: locktorture's lock_busted, a "lock" whose
//! acquires take nothing, so a writer walks in alongside anyone. A torture run
//! over it must report failures; if it ever reported `Fail: 0`, the check
//! would be proven blind.

use super::{Config, End, Role, run_with};
use crate::locks::platform::Native;
use crate::locks::{KindInfo, LockKind, RawRwLock};
use std::time::Duration;

/// Admits everyone. `SHARED` says which contract it pretends to keep: a
/// reader-writer lock (true) or an exclusive-only one (false).
pub struct Busted<const SHARED: bool>;

impl<const SHARED: bool> KindInfo for Busted<SHARED> {
    const KIND: LockKind = LockKind::Rwlock;
    const SHARED_READERS: bool = SHARED;
    const HAS_DOWNGRADE: bool = true;
}

// SAFETY: deliberately breaks the contract (no exclusion at all). Test-only: it
// guards no data, only the torture checker's counters, which are atomics.
unsafe impl<const SHARED: bool> RawRwLock for Busted<SHARED> {
    type ReadToken = ();
    type WriteToken = ();
    type Platform = Native;
    fn new() -> Self {
        Busted
    }
    fn lock_shared(&self) {}
    fn try_lock_shared(&self) -> Option<()> {
        Some(())
    }
    fn lock_shared_critical(&self) {}
    unsafe fn unlock_shared(&self, _: ()) {}
    fn lock_exclusive(&self) {}
    fn try_lock_exclusive(&self) -> Option<()> {
        Some(())
    }
    unsafe fn unlock_exclusive(&self, _: ()) {}
    unsafe fn downgrade(&self, _: ()) {}
}

/// A run long and slow enough that holds overlap whatever the scheduler does:
/// each thread is inside its 20 us hold nearly all the time, so two threads
/// running at once, or one preempted mid-hold while another runs, collide.
fn config(threads: [usize; 4]) -> Config {
    Config {
        kind: LockKind::Rwlock,
        threads,
        duration: Duration::from_millis(100),
        load: Duration::from_micros(20),
        interval: Duration::ZERO,
        sched: false,
        exponential: false,
        seed: 0,
        engine: crate::torture::Engine::Native,
    }
}

fn fails_of(out: &super::Outcome, role: Role) -> u64 {
    out.threads
        .iter()
        .filter(|t| t.role == role)
        .map(|t| t.fails)
        .sum()
}

#[test]
fn writers_let_in_alongside_others_are_reported() {
    let out = run_with::<Busted<true>>(&config([2, 2, 1, 0])).unwrap();
    assert!(out.failed());
    assert!(fails_of(&out, Role::Writer) > 0, "writers saw no intruder");
    assert!(
        out.threads
            .iter()
            .all(|t| matches!(t.end, End::Finished { .. }))
    );
    // Failures are counted per acquisition, never more than were taken.
    assert!(out.threads.iter().all(|t| t.fails <= t.taken));
}

#[test]
fn two_readers_inside_an_exclusive_only_lock_are_reported() {
    let out = run_with::<Busted<false>>(&config([3, 0, 0, 0])).unwrap();
    assert!(fails_of(&out, Role::Reader) > 0, "readers saw no intruder");
}

#[test]
fn readers_alone_on_a_shared_lock_are_not_failures() {
    // The same busted lock is correct for a readers-only run of a shared kind:
    // the check must not cry wolf.
    let out = run_with::<Busted<true>>(&config([3, 0, 0, 1])).unwrap();
    assert_eq!(out.fails(), 0);
    assert!(!out.failed());
}
