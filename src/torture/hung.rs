//! A lock whose write acquire never returns (a lost wake-up): the watchdog must
//! end the run once no thread has finished for its window ([`MIN_WINDOW`] for a
//! run as short as this one) and report the writer as stuck.

use super::engine::MIN_WINDOW;
use super::{Config, End, Role, run_with};
use crate::locks::platform::Native;
use crate::locks::{KindInfo, LockKind, RawRwLock};
use std::time::{Duration, Instant};

/// Readers pass freely; a writer parks forever (costing no CPU while the rest
/// of the test binary runs).
pub struct Hung;

impl KindInfo for Hung {
    const KIND: LockKind = LockKind::RwsemFifo;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = false;
}

// SAFETY: no writer ever holds it, so readers sharing it keep the contract.
unsafe impl RawRwLock for Hung {
    type ReadToken = ();
    type WriteToken = ();
    type Platform = Native;
    fn new() -> Self {
        Hung
    }
    fn lock_shared(&self) {}
    fn try_lock_shared(&self) -> Option<()> {
        Some(())
    }
    fn lock_shared_critical(&self) {}
    unsafe fn unlock_shared(&self, _: ()) {}
    fn lock_exclusive(&self) {
        loop {
            std::thread::park();
        }
    }
    fn try_lock_exclusive(&self) -> Option<()> {
        None
    }
    unsafe fn unlock_exclusive(&self, _: ()) {}
    unsafe fn downgrade(&self, _: ()) {}
}

#[test]
fn watchdog_reports_a_writer_that_never_gets_the_lock() {
    let cfg = Config {
        kind: LockKind::RwsemFifo,
        threads: [1, 1, 0, 0],
        duration: Duration::from_millis(30),
        load: Duration::ZERO,
        interval: Duration::ZERO,
        sched: false,
        exponential: false,
        seed: 0,
        engine: crate::torture::Engine::Native,
    };
    let t = Instant::now();
    let out = run_with::<Hung>(&cfg).unwrap();
    // It returned, and not before the watchdog's window was over.
    assert!(t.elapsed() >= cfg.duration + MIN_WINDOW);
    assert_eq!(out.stuck(), 1);
    assert!(out.failed());
    let writer = &out.threads[1];
    assert_eq!((writer.role, writer.taken), (Role::Writer, 0));
    assert!(matches!(writer.end, End::Stuck));
    assert!(matches!(out.threads[0].end, End::Finished { .. }));
    assert!(out.threads[0].taken > 0);
}
