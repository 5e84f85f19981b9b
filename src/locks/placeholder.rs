//! TEMPORARY scaffold so the crate compiles while the real kinds are written.
//! Every kind file aliases this until its real algorithm lands; this file is then
//! deleted. Not a lock under study.

use super::{LockKind, RawRwLock};
use std::sync::atomic::{AtomicIsize, Ordering};

pub struct Placeholder<const K: usize>(AtomicIsize);

unsafe impl<const K: usize> RawRwLock for Placeholder<K> {
    type ReadToken = ();
    type WriteToken = ();
    const KIND: LockKind = LockKind::ALL[K];
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = true;
    fn new() -> Self {
        Placeholder(AtomicIsize::new(0))
    }
    fn lock_shared(&self) {
        while self.try_lock_shared().is_none() {
            std::hint::spin_loop();
        }
    }
    fn try_lock_shared(&self) -> Option<()> {
        let v = self.0.load(Ordering::Relaxed);
        (v >= 0
            && self
                .0
                .compare_exchange(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok())
        .then_some(())
    }
    fn lock_shared_critical(&self) {
        self.lock_shared()
    }
    unsafe fn unlock_shared(&self, _: ()) {
        self.0.fetch_sub(1, Ordering::Release);
    }
    fn lock_exclusive(&self) {
        while self.try_lock_exclusive().is_none() {
            std::hint::spin_loop();
        }
    }
    fn try_lock_exclusive(&self) -> Option<()> {
        self.0
            .compare_exchange(0, -1, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| ())
    }
    unsafe fn unlock_exclusive(&self, _: ()) {
        self.0.store(0, Ordering::Release);
    }
    unsafe fn downgrade(&self, _: ()) {
        self.0.store(1, Ordering::Release);
    }
}
