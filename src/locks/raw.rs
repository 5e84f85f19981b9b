//! The one raw reader-writer lock contract every kind implements.
//!
//! In the style of lock_api 0.5: the raw lock holds only its state, never data;
//! each acquisition returns a token that the matching unlock consumes, so a kind
//! that needs per-acquisition state (an MCS queue node, a per-CPU reader slot)
//! carries it in the token. The raw level names mechanisms (`lock_shared`,
//! `unlock_exclusive`); [`super::guard`] names intent (`read`, `write`).
//!
//! Exclusive-only kinds (tas, spinlock, qspinlock, mutex) take the exclusive
//! path for every shared request, exactly as the kernel did before the rmap
//! locks became reader-writer locks; `exclusive_only!` writes that mapping
//! once for all of them.
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

/// The [`RawRwLock`] of an exclusive-only kind (`$ty<P>`, tokens `$token`):
/// a read, critical or not, takes the exclusive path as a request of mode
/// Read (for its statistics), and a downgrade keeps the hold exclusive. The
/// kind provides `$new` and the inherent `$lock(Mode) -> $token`,
/// `$try() -> Option<$token>` and `$unlock($token)`.
macro_rules! exclusive_only {
    ($ty:ident, $token:ty, $new:expr, $lock:ident, $try:ident, $unlock:ident) => {
        // SAFETY: the kind's inherent lock grants one holder at a time, and
        // every mode takes it.
        unsafe impl<P: Platform> $crate::locks::RawRwLock for $ty<P> {
            type ReadToken = $token;
            type WriteToken = $token;
            type Platform = P;

            fn new() -> Self {
                $new
            }

            #[inline]
            fn lock_shared(&self) -> $token {
                self.$lock($crate::mode::Mode::Read)
            }

            #[inline]
            fn try_lock_shared(&self) -> Option<$token> {
                self.$try()
            }

            #[inline]
            fn lock_shared_critical(&self) -> $token {
                self.$lock($crate::mode::Mode::Read)
            }

            #[inline]
            unsafe fn unlock_shared(&self, held: $token) {
                self.$unlock(held)
            }

            #[inline]
            fn lock_exclusive(&self) -> $token {
                self.$lock($crate::mode::Mode::Write)
            }

            #[inline]
            fn try_lock_exclusive(&self) -> Option<$token> {
                self.$try()
            }

            #[inline]
            unsafe fn unlock_exclusive(&self, held: $token) {
                self.$unlock(held)
            }

            #[inline]
            unsafe fn downgrade(&self, held: $token) -> $token {
                held
            }
        }
    };
}
pub(crate) use exclusive_only;

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
