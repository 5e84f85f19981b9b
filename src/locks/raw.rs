//! The one raw reader-writer lock contract every kind implements.
//!
//! In the style of lock_api 0.5: the raw lock holds only its state, never data;
//! each acquisition returns a token that the matching unlock consumes, so a kind
//! that needs per-acquisition state (an MCS queue node, a per-CPU reader slot)
//! carries it in the token. The raw level names mechanisms (`lock_shared`,
//! `unlock_exclusive`); [`super::guard`] names intent (`read`, `write`).
//!
//! Exclusive-only kinds (spinlock, qspinlock, mutex) take the exclusive path for
//! every shared request, exactly as the kernel did before the rmap locks became
//! reader-writer locks.
//!
//! What a kind is, as opposed to what it does, is [`KindInfo`]: constants a
//! kind chosen at compile time has, and a lock whose kind is chosen at run
//! time ([`super::AnyLock`]) answers by value instead.
//!
//! A raw lock counts only its own mechanism's events (slow-path entries,
//! spins, sleeps, handoffs, steals, wake batches); acquisitions by mode, failed
//! tries and downgrades are counted once, by the guard layer above it.

use super::LockKind;
use super::platform::Platform;

/// A raw reader-writer lock.
///
/// # Safety
/// Implementors guarantee mutual exclusion: while a `WriteToken` is live no other
/// token of the same lock is live; `ReadToken`s coexist only with `ReadToken`s
/// (and for exclusive-only kinds not even with each other). A token is only
/// produced by a successful acquisition of this lock.
pub unsafe trait RawRwLock: Send + Sync + Sized + 'static {
    /// Proof of a shared hold, consumed by [`RawRwLock::unlock_shared`].
    type ReadToken;
    /// Proof of an exclusive hold, consumed by [`RawRwLock::unlock_exclusive`].
    type WriteToken;
    /// The machine this lock's words and waits live on.
    type Platform: Platform;

    /// An unlocked lock.
    fn new() -> Self;

    /// down_read / read_lock: blocks (spins or sleeps) until a shared hold is granted.
    fn lock_shared(&self) -> Self::ReadToken;
    /// down_read_trylock: never waits.
    fn try_lock_shared(&self) -> Option<Self::ReadToken>;
    /// down_read_critical (Lespinasse 2010, seed 002): like `lock_shared`, but may
    /// enter past queued writers while only readers hold the lock. Kinds without
    /// such a path behave as `lock_shared`.
    fn lock_shared_critical(&self) -> Self::ReadToken;
    /// up_read.
    ///
    /// # Safety
    /// `token` came from this lock and is released once.
    unsafe fn unlock_shared(&self, token: Self::ReadToken);

    /// down_write / write_lock.
    fn lock_exclusive(&self) -> Self::WriteToken;
    /// down_write_trylock: never waits.
    fn try_lock_exclusive(&self) -> Option<Self::WriteToken>;
    /// up_write.
    ///
    /// # Safety
    /// `token` came from this lock and is released once.
    unsafe fn unlock_exclusive(&self, token: Self::WriteToken);

    /// downgrade_write: turn an exclusive hold into a shared one without a window
    /// in which another writer could enter. Kinds without
    /// [`KindInfo::HAS_DOWNGRADE`] keep the hold exclusive (which is still
    /// correct, just not concurrent).
    ///
    /// # Safety
    /// `token` came from this lock.
    unsafe fn downgrade(&self, token: Self::WriteToken) -> Self::ReadToken;
}

/// What a kind chosen at compile time is.
pub trait KindInfo {
    /// The name the CLI uses for this kind.
    const KIND: LockKind;
    /// Whether shared holders can be inside together (false for exclusive-only kinds).
    const SHARED_READERS: bool;
    /// Whether [`RawRwLock::downgrade`] is the kind's own atomic write-to-read
    /// conversion (rw_semaphore's `downgrade_write`), rather than "stay exclusive".
    const HAS_DOWNGRADE: bool;
}
