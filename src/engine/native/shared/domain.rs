//! One lock domain of the shared world: a lock and the data it guards, with
//! guards that tag the lock class for the statistics.
//!
//! Two kinds of lock guard domains: the kind under study, a type parameter `L:
//! RawRwLock` (family roots and i_mmap), and [`AnyLock`], whose kind is chosen
//! at run time (mmap_lock). [`DomainLock`] is the one interface over both, so
//! one cell type and one pair of guards serve every domain.
//!
//! Every acquisition and every release first tags the current thread's lock
//! class ([`stats::set_class`]): release paths count events too (wake batches,
//! handoffs), and those must land in the class of the lock being released, not
//! in whichever class the thread tagged last.

use crate::locks::any::{AnyReadToken, AnyWriteToken};
use crate::locks::stats::{self, LockClass};
use crate::locks::{AnyLock, RawRwLock};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

/// A reader-writer lock a domain can use.
///
/// # Safety
/// Implementors guarantee [`RawRwLock`]'s contract: while a write token is
/// live no other token of the same lock is; read tokens coexist only with
/// read tokens; a token is only produced by a successful acquisition.
pub unsafe trait DomainLock: Send + Sync + 'static {
    type Read;
    type Write;
    fn read(&self) -> Self::Read;
    fn read_critical(&self) -> Self::Read;
    fn try_read(&self) -> Option<Self::Read>;
    fn write(&self) -> Self::Write;
    /// # Safety
    /// `token` came from this lock and is released once.
    unsafe fn unlock_read(&self, token: Self::Read);
    /// # Safety
    /// `token` came from this lock and is released once.
    unsafe fn unlock_write(&self, token: Self::Write);
    /// # Safety
    /// `token` came from this lock.
    unsafe fn downgrade(&self, token: Self::Write) -> Self::Read;
}

// SAFETY: forwards to the kind's own RawRwLock implementation, whose contract
// is the one DomainLock states.
unsafe impl<L: RawRwLock> DomainLock for L {
    type Read = L::ReadToken;
    type Write = L::WriteToken;
    #[inline]
    fn read(&self) -> Self::Read {
        self.lock_shared()
    }
    #[inline]
    fn read_critical(&self) -> Self::Read {
        self.lock_shared_critical()
    }
    #[inline]
    fn try_read(&self) -> Option<Self::Read> {
        self.try_lock_shared()
    }
    #[inline]
    fn write(&self) -> Self::Write {
        self.lock_exclusive()
    }
    #[inline]
    unsafe fn unlock_read(&self, token: Self::Read) {
        // SAFETY: forwarded caller contract.
        unsafe { self.unlock_shared(token) }
    }
    #[inline]
    unsafe fn unlock_write(&self, token: Self::Write) {
        // SAFETY: forwarded caller contract.
        unsafe { self.unlock_exclusive(token) }
    }
    #[inline]
    unsafe fn downgrade(&self, token: Self::Write) -> Self::Read {
        // SAFETY: forwarded caller contract.
        unsafe { RawRwLock::downgrade(self, token) }
    }
}

// SAFETY: every AnyLock variant is a RawRwLock and AnyLock forwards each call
// to the variant it holds (src/locks/any.rs).
unsafe impl DomainLock for AnyLock {
    type Read = AnyReadToken;
    type Write = AnyWriteToken;
    fn read(&self) -> Self::Read {
        self.lock_shared()
    }
    fn read_critical(&self) -> Self::Read {
        self.lock_shared_critical()
    }
    fn try_read(&self) -> Option<Self::Read> {
        self.try_lock_shared()
    }
    fn write(&self) -> Self::Write {
        self.lock_exclusive()
    }
    unsafe fn unlock_read(&self, token: Self::Read) {
        // SAFETY: forwarded caller contract.
        unsafe { self.unlock_shared(token) }
    }
    unsafe fn unlock_write(&self, token: Self::Write) {
        // SAFETY: forwarded caller contract.
        unsafe { self.unlock_exclusive(token) }
    }
    unsafe fn downgrade(&self, token: Self::Write) -> Self::Read {
        // SAFETY: forwarded caller contract.
        unsafe { AnyLock::downgrade(self, token) }
    }
}

/// Data of type `T` guarded by lock `K`, whose events count in `class`.
///
/// The lock is the slot's for good: a slot's data may die and be replaced
/// (an exited mm, a freed family), but its lock stays, so a thread that
/// reached the slot before the replacement still excludes the new owner.
pub struct Domain<K: DomainLock, T> {
    lock: K,
    class: LockClass,
    data: UnsafeCell<T>,
}

// SAFETY: the data is reached only through guards, which DomainLock's contract
// makes exclusive (write) or shared among readers only (read), as for std's
// RwLock: sending the domain sends the data.
unsafe impl<K: DomainLock, T: Send> Send for Domain<K, T> {}
// SAFETY: as above; readers on several threads share `&T`, so `T: Sync` too.
unsafe impl<K: DomainLock, T: Send + Sync> Sync for Domain<K, T> {}

impl<K: DomainLock, T> Domain<K, T> {
    pub fn new(lock: K, class: LockClass, data: T) -> Self {
        Domain {
            lock,
            class,
            data: UnsafeCell::new(data),
        }
    }

    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// down_read.
    #[inline]
    pub fn read(&self) -> Shared<'_, K, T> {
        stats::set_class(self.class);
        let token = self.lock.read();
        Shared {
            domain: self,
            token: Some(token),
        }
    }

    /// down_read_critical (seed 002): may pass queued writers.
    pub fn read_critical(&self) -> Shared<'_, K, T> {
        stats::set_class(self.class);
        let token = self.lock.read_critical();
        Shared {
            domain: self,
            token: Some(token),
        }
    }

    /// down_read_trylock: None if the lock is not free for a reader now.
    #[inline]
    pub fn try_read(&self) -> Option<Shared<'_, K, T>> {
        stats::set_class(self.class);
        let token = self.lock.try_read()?;
        Some(Shared {
            domain: self,
            token: Some(token),
        })
    }

    /// down_write.
    #[inline]
    pub fn write(&self) -> Exclusive<'_, K, T> {
        stats::set_class(self.class);
        let token = self.lock.write();
        Exclusive {
            domain: self,
            token: Some(token),
        }
    }
}

/// A shared hold of a [`Domain`]; releases on drop.
pub struct Shared<'a, K: DomainLock, T> {
    domain: &'a Domain<K, T>,
    /// Some until drop takes it.
    token: Option<K::Read>,
}

/// An exclusive hold of a [`Domain`]; releases on drop.
pub struct Exclusive<'a, K: DomainLock, T> {
    domain: &'a Domain<K, T>,
    /// Some until drop or downgrade takes it.
    token: Option<K::Write>,
}

impl<'a, K: DomainLock, T> Exclusive<'a, K, T> {
    /// downgrade_write: a reader now, with no window for a writer.
    pub fn downgrade(mut self) -> Shared<'a, K, T> {
        let token = self.token.take().expect("write token present until drop");
        let domain = self.domain;
        stats::set_class(domain.class);
        // SAFETY: the token came from this domain's lock and is consumed here;
        // drop then finds None and releases nothing.
        let read = unsafe { domain.lock.downgrade(token) };
        Shared {
            domain,
            token: Some(read),
        }
    }
}

impl<K: DomainLock, T> Deref for Shared<'_, K, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the domain's lock shared, so no writer holds
        // it and nobody has `&mut T`.
        unsafe { &*self.domain.data.get() }
    }
}

impl<K: DomainLock, T> Deref for Exclusive<'_, K, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the domain's lock exclusively.
        unsafe { &*self.domain.data.get() }
    }
}

impl<K: DomainLock, T> DerefMut for Exclusive<'_, K, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the domain's lock exclusively, and `&mut
        // self` makes this the only reference derived from it.
        unsafe { &mut *self.domain.data.get() }
    }
}

impl<K: DomainLock, T> Drop for Shared<'_, K, T> {
    #[inline]
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            stats::set_class(self.domain.class);
            // SAFETY: the token came from this domain's lock; taken once.
            unsafe { self.domain.lock.unlock_read(token) }
        }
    }
}

impl<K: DomainLock, T> Drop for Exclusive<'_, K, T> {
    #[inline]
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            stats::set_class(self.domain.class);
            // SAFETY: the token came from this domain's lock; taken once.
            unsafe { self.domain.lock.unlock_write(token) }
        }
    }
}
