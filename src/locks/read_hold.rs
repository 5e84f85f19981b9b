//! The read token of reader-writer kinds that have no downgrade of their own.
//!
//! `RawRwLock::downgrade` must return a read token even where the kernel has
//! no `downgrade_write` (rwlock_t, qrwlock, percpu_rw_semaphore): there the
//! hold stays exclusive, and the token has to remember that so `unlock_shared`
//! releases the right thing.

/// A read token: a real shared hold, or an exclusive hold kept by `downgrade`.
#[must_use = "a read token must be passed to unlock_shared"]
#[derive(Debug, PartialEq, Eq)]
pub enum ReadHold<S = ()> {
    /// A shared hold, carrying what its unlock needs (a percpu-rwsem slot).
    Shared(S),
    /// An exclusive hold that `downgrade` kept exclusive.
    Exclusive,
}
