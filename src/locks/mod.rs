//! The locks under study, one kind per file behind [`RawRwLock`].
//!
//! Each kind's file starts with its state-word bit map and invariants; its
//! decisions (who is granted, who is woken, when handoff starts, whether a
//! newcomer may steal) are plain functions over the state and the queue. Every
//! kind is generic over a [`platform::Platform`] (atomics, spin hint, parking,
//! clock, preemption points), so the native engine and the simulator run the
//! same code of each lock.

pub mod any;
pub mod guard;
pub mod kind;
#[cfg(shuttle)]
pub mod model_check;
pub mod mutex;
pub mod percpu_rwsem;
pub mod platform;
pub mod qrwlock;
pub mod qspinlock;
pub mod raw;
pub mod rcu_sync;
pub mod read_hold;
pub mod rw_semaphore;
pub mod rwlock;
pub mod rwsem;
pub mod rwsem_fifo;
pub mod rwsem_xadd;
pub mod spin_wait;
pub mod spinlock;
pub mod stats;
pub mod stealing;
pub mod tas;
pub mod trace;
pub mod waitq;

pub use any::AnyLock;
pub use guard::{ReadGuard, RwLock, WriteGuard};
pub use kind::{LockKind, LockVisitor};
pub use raw::{KindInfo, RawRwLock};
