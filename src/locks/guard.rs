//! The one guard layer over every [`RawRwLock`]: the intent-level API (`read`,
//! `write`) over data, with the lock class its events count under.
//!
//! Only guards call the raw unlocks, so a token cannot be released twice or by
//! the wrong mode. The guards also do the instrumentation every kind shares,
//! once: each acquisition and each release first tags the current thread's
//! lock class ([`stats::set_class`], one thread-local store: release paths
//! count events too, wake batches and handoffs, and those must land in the
//! class of the lock being released, not in whichever class the thread
//! tagged last); failed tries are counted as they fail; and after each
//! release, outside the critical section, the acquisition it ended is
//! counted by mode (a downgraded hold as the write it was, plus a downgrade)
//! and the grants the kind noted are recorded ([`stats::released`]). So
//! nothing is counted between a grant and its release.

use super::RawRwLock;
use super::stats::{self, Event, LockClass};
use crate::mode::Mode;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

/// Data of type `T` guarded by a raw lock `L`, whose events count in `class`.
///
/// The lock is the value's for good: an engine's slot may see its data die
/// and be replaced (an exited mm, a freed family) under the same lock, so a
/// thread that reached the slot before the replacement still excludes the new
/// owner.
pub struct RwLock<L: RawRwLock, T> {
    raw: L,
    class: LockClass,
    data: UnsafeCell<T>,
}

// SAFETY: the raw lock's contract gives exclusive access for `&mut T` and shared
// access only among readers, as for std's RwLock.
unsafe impl<L: RawRwLock, T: Send> Send for RwLock<L, T> {}
// SAFETY: as above; readers share `&T`, so `T: Sync` is needed too.
unsafe impl<L: RawRwLock, T: Send + Sync> Sync for RwLock<L, T> {}

impl<L: RawRwLock, T> RwLock<L, T> {
    /// A new lock of class [`LockClass::AnonVma`] (a lone lock under test).
    pub fn new(data: T) -> Self {
        RwLock::with_raw(L::new(), LockClass::AnonVma, data)
    }

    /// A lock built by the caller (a run-time kind), counting in `class`.
    pub fn with_raw(raw: L, class: LockClass, data: T) -> Self {
        RwLock {
            raw,
            class,
            data: UnsafeCell::new(data),
        }
    }

    /// The raw lock, for callers that test the lock itself.
    pub fn raw(&self) -> &L {
        &self.raw
    }

    /// down_read.
    #[inline]
    pub fn read(&self) -> ReadGuard<'_, L, T> {
        let token = self.acquired(|raw| raw.lock_shared());
        ReadGuard::new(self, token, false)
    }

    /// down_read_trylock: None if the lock is not free for a reader now.
    #[inline]
    pub fn try_read(&self) -> Option<ReadGuard<'_, L, T>> {
        let token = self.tried(|raw| raw.try_lock_shared())?;
        Some(ReadGuard::new(self, token, false))
    }

    /// down_read_critical (seed 002): may pass queued writers while only
    /// readers hold it.
    #[inline]
    pub fn read_critical(&self) -> ReadGuard<'_, L, T> {
        let token = self.acquired(|raw| raw.lock_shared_critical());
        ReadGuard::new(self, token, false)
    }

    /// down_write.
    #[inline]
    pub fn write(&self) -> WriteGuard<'_, L, T> {
        let token = self.acquired(|raw| raw.lock_exclusive());
        WriteGuard {
            lock: self,
            token: Some(token),
        }
    }

    /// down_write_trylock.
    #[inline]
    pub fn try_write(&self) -> Option<WriteGuard<'_, L, T>> {
        let token = self.tried(|raw| raw.try_lock_exclusive())?;
        Some(WriteGuard {
            lock: self,
            token: Some(token),
        })
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// Tag the class, then acquire (counted at the release).
    #[inline]
    fn acquired<K>(&self, lock: impl FnOnce(&L) -> K) -> K {
        stats::set_class(self.class);
        lock(&self.raw)
    }

    /// Tag the class, then try; a failure is counted now, a success at the
    /// release.
    #[inline]
    fn tried<K>(&self, try_lock: impl FnOnce(&L) -> Option<K>) -> Option<K> {
        stats::set_class(self.class);
        let token = try_lock(&self.raw);
        if token.is_none() {
            stats::count(Event::TryFail, 1);
        }
        token
    }

    /// Tag the class for a release, run it, then count the acquisition of
    /// `mode` it ended and record the noted grants.
    #[inline]
    fn released(&self, mode: Mode, unlock: impl FnOnce(&L)) {
        stats::set_class(self.class);
        unlock(&self.raw);
        stats::released(Event::acquired(mode));
    }
}

/// A shared hold; releases on drop.
pub struct ReadGuard<'a, L: RawRwLock, T> {
    lock: &'a RwLock<L, T>,
    /// Some until drop takes it.
    token: Option<L::ReadToken>,
    /// It began as a write hold and was downgraded: counted as that write
    /// acquisition and a downgrade at the release.
    downgraded: bool,
}

impl<'a, L: RawRwLock, T> ReadGuard<'a, L, T> {
    fn new(lock: &'a RwLock<L, T>, token: L::ReadToken, downgraded: bool) -> Self {
        ReadGuard {
            lock,
            token: Some(token),
            downgraded,
        }
    }
}

/// An exclusive hold; releases on drop.
pub struct WriteGuard<'a, L: RawRwLock, T> {
    lock: &'a RwLock<L, T>,
    /// Some until drop or downgrade takes it.
    token: Option<L::WriteToken>,
}

impl<'a, L: RawRwLock, T> WriteGuard<'a, L, T> {
    /// downgrade_write: become a reader without letting a writer in between.
    pub fn downgrade(mut self) -> ReadGuard<'a, L, T> {
        let token = self.token.take().expect("write token present until drop");
        let lock = self.lock;
        stats::set_class(lock.class);
        // SAFETY: the token came from `lock` and is consumed here; drop sees None.
        let token = unsafe { lock.raw.downgrade(token) };
        ReadGuard::new(lock, token, true)
    }
}

impl<L: RawRwLock, T> Deref for ReadGuard<'_, L, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: a shared hold excludes writers.
        unsafe { &*self.lock.data.get() }
    }
}

impl<L: RawRwLock, T> Deref for WriteGuard<'_, L, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: an exclusive hold excludes everyone else.
        unsafe { &*self.lock.data.get() }
    }
}

impl<L: RawRwLock, T> DerefMut for WriteGuard<'_, L, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: an exclusive hold excludes everyone else, and `&mut self`
        // makes this the only reference derived from it.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<L: RawRwLock, T> Drop for ReadGuard<'_, L, T> {
    #[inline]
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            let mode = if self.downgraded {
                Mode::Write
            } else {
                Mode::Read
            };
            // SAFETY: the token came from this lock and is released once.
            self.lock
                .released(mode, |raw| unsafe { raw.unlock_shared(token) });
            if self.downgraded {
                stats::count(Event::Downgrade, 1);
            }
        }
    }
}

impl<L: RawRwLock, T> Drop for WriteGuard<'_, L, T> {
    #[inline]
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            // SAFETY: the token came from this lock and is released once.
            self.lock
                .released(Mode::Write, |raw| unsafe { raw.unlock_exclusive(token) });
        }
    }
}
