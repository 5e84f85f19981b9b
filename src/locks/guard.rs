//! Safe guards over a [`RawRwLock`]: the intent-level API (`read`, `write`).
//!
//! Only guards call the raw unlocks, so a token cannot be released twice or by
//! the wrong mode.

use super::RawRwLock;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

/// Data of type `T` guarded by a raw lock `L`.
pub struct RwLock<L: RawRwLock, T> {
    raw: L,
    data: UnsafeCell<T>,
}

// SAFETY: the raw lock's contract gives exclusive access for `&mut T` and shared
// access only among readers, as for std's RwLock.
unsafe impl<L: RawRwLock, T: Send> Send for RwLock<L, T> {}
// SAFETY: as above; readers share `&T`, so `T: Sync` is needed too.
unsafe impl<L: RawRwLock, T: Send + Sync> Sync for RwLock<L, T> {}

impl<L: RawRwLock, T> RwLock<L, T> {
    pub fn new(data: T) -> Self {
        RwLock {
            raw: L::new(),
            data: UnsafeCell::new(data),
        }
    }

    /// The raw lock, for callers that account or test the lock itself.
    pub fn raw(&self) -> &L {
        &self.raw
    }

    pub fn read(&self) -> ReadGuard<'_, L, T> {
        ReadGuard {
            lock: self,
            token: Some(self.raw.lock_shared()),
        }
    }

    pub fn try_read(&self) -> Option<ReadGuard<'_, L, T>> {
        let token = self.raw.try_lock_shared()?;
        Some(ReadGuard {
            lock: self,
            token: Some(token),
        })
    }

    /// down_read_critical: may pass queued writers while only readers hold it.
    pub fn read_critical(&self) -> ReadGuard<'_, L, T> {
        ReadGuard {
            lock: self,
            token: Some(self.raw.lock_shared_critical()),
        }
    }

    pub fn write(&self) -> WriteGuard<'_, L, T> {
        WriteGuard {
            lock: self,
            token: Some(self.raw.lock_exclusive()),
        }
    }

    pub fn try_write(&self) -> Option<WriteGuard<'_, L, T>> {
        let token = self.raw.try_lock_exclusive()?;
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
}

/// A shared hold; releases on drop.
pub struct ReadGuard<'a, L: RawRwLock, T> {
    lock: &'a RwLock<L, T>,
    // Always Some until drop takes it.
    token: Option<L::ReadToken>,
}

/// An exclusive hold; releases on drop.
pub struct WriteGuard<'a, L: RawRwLock, T> {
    lock: &'a RwLock<L, T>,
    token: Option<L::WriteToken>,
}

impl<'a, L: RawRwLock, T> WriteGuard<'a, L, T> {
    /// downgrade_write: become a reader without letting a writer in between.
    pub fn downgrade(mut self) -> ReadGuard<'a, L, T> {
        let token = self.token.take().expect("write token present until drop");
        let lock = self.lock;
        // SAFETY: the token came from `lock` and is consumed here; drop sees None.
        let read = unsafe { lock.raw.downgrade(token) };
        ReadGuard {
            lock,
            token: Some(read),
        }
    }
}

impl<L: RawRwLock, T> Deref for ReadGuard<'_, L, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a shared hold excludes writers.
        unsafe { &*self.lock.data.get() }
    }
}

impl<L: RawRwLock, T> Deref for WriteGuard<'_, L, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: an exclusive hold excludes everyone else.
        unsafe { &*self.lock.data.get() }
    }
}

impl<L: RawRwLock, T> DerefMut for WriteGuard<'_, L, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: an exclusive hold excludes everyone else.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<L: RawRwLock, T> Drop for ReadGuard<'_, L, T> {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            // SAFETY: the token came from this lock and is released once.
            unsafe { self.lock.raw.unlock_shared(token) }
        }
    }
}

impl<L: RawRwLock, T> Drop for WriteGuard<'_, L, T> {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            // SAFETY: the token came from this lock and is released once.
            unsafe { self.lock.raw.unlock_exclusive(token) }
        }
    }
}
