//! Lock kinds by name, and the one place that turns a run-time kind into a
//! monomorphised call.

use super::platform::Platform;
use super::{KindInfo, RawRwLock};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// Every lock kind the tool models, named as the CLI names them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum LockKind {
    /// Test-and-set spinlock (2.6.2x, x86 until 2.6.24): unfair, every waiter retries its RMW.
    Tas,
    /// Ticket spinlock (2.6.25-4.1): FIFO, every waiter spins on the shared word.
    Spinlock,
    /// MCS queue spinlock: each waiter spins on its own cache-padded node.
    Qspinlock,
    /// 2.6-era rwlock_t: spinning, reader-preferring.
    Rwlock,
    /// Queued rwlock: spinning, fair (readers queue behind a waiting writer).
    Qrwlock,
    /// The 2007 rw_semaphore (lib/rwsem.c): sleeping, strict FIFO.
    RwsemFifo,
    /// The v3.16-v5.2 rw_semaphore (rwsem-xadd.c): stealing, spinning on writer owners only, no handoff.
    RwsemXadd,
    /// Today's rw_semaphore (kernel/locking/rwsem.c): stealing, spinning, handoff.
    Rwsem,
    /// Sleeping mutex with optimistic spinning.
    Mutex,
    /// percpu_rw_semaphore: readers touch only their own slot, writers drain them.
    PercpuRwsem,
}

impl LockKind {
    /// Every kind, in the order tables and plots list them.
    pub const ALL: [LockKind; 10] = [
        LockKind::Tas,
        LockKind::Spinlock,
        LockKind::Qspinlock,
        LockKind::Rwlock,
        LockKind::Qrwlock,
        LockKind::RwsemFifo,
        LockKind::RwsemXadd,
        LockKind::Rwsem,
        LockKind::Mutex,
        LockKind::PercpuRwsem,
    ];

    /// The CLI name (`rwsem-fifo`).
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Tas => "tas",
            LockKind::Spinlock => "spinlock",
            LockKind::Qspinlock => "qspinlock",
            LockKind::Rwlock => "rwlock",
            LockKind::Qrwlock => "qrwlock",
            LockKind::RwsemFifo => "rwsem-fifo",
            LockKind::RwsemXadd => "rwsem-xadd",
            LockKind::Rwsem => "rwsem",
            LockKind::Mutex => "mutex",
            LockKind::PercpuRwsem => "percpu-rwsem",
        }
    }

    /// Parse a CLI name; the error lists every valid name, as locktorture does.
    pub fn parse(name: &str) -> Result<LockKind, String> {
        <LockKind as ValueEnum>::from_str(name, false).map_err(|_| {
            let valid: Vec<&str> = LockKind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown lock kind '{name}' (valid: {})", valid.join(", "))
        })
    }

    /// The default kind, chosen at build time by the `lock-*` cargo features.
    ///
    /// Precedence when several features are on (they are additive): the first of
    /// tas, spinlock, qspinlock, rwlock, qrwlock, rwsem-fifo, rwsem-xadd, mutex,
    /// percpu-rwsem that is enabled wins; `lock-rwsem` (the default feature) is
    /// taken only when none of the others is on. So `--features lock-spinlock`
    /// selects the spinlock even with default features left on.
    pub const fn default_kind() -> LockKind {
        if cfg!(feature = "lock-tas") {
            LockKind::Tas
        } else if cfg!(feature = "lock-spinlock") {
            LockKind::Spinlock
        } else if cfg!(feature = "lock-qspinlock") {
            LockKind::Qspinlock
        } else if cfg!(feature = "lock-rwlock") {
            LockKind::Rwlock
        } else if cfg!(feature = "lock-qrwlock") {
            LockKind::Qrwlock
        } else if cfg!(feature = "lock-rwsem-fifo") {
            LockKind::RwsemFifo
        } else if cfg!(feature = "lock-rwsem-xadd") {
            LockKind::RwsemXadd
        } else if cfg!(feature = "lock-mutex") {
            LockKind::Mutex
        } else if cfg!(feature = "lock-percpu-rwsem") {
            LockKind::PercpuRwsem
        } else {
            LockKind::Rwsem
        }
    }

    /// Run `visitor` monomorphised for this kind on platform `P`: the single
    /// run-time -> compile-time switch, so engines and workloads stay generic
    /// over [`RawRwLock`].
    pub fn dispatch<P: Platform, V: LockVisitor>(self, visitor: V) -> V::Output {
        macro_rules! visit {
            ($($variant:ident => $ty:ty,)*) => {
                match self {
                    $(LockKind::$variant => visitor.visit::<$ty>(),)*
                }
            };
        }
        crate::for_each_lock_kind!(visit, P)
    }
}

/// The table of kinds and their types, written once: `$m!` receives
/// `Variant => path::Type<$p>,` for every kind on platform `$p`
/// ([`LockKind::dispatch`] and [`super::any::AnyLock`] are both built from it).
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_lock_kind {
    ($m:ident, $p:ident) => {
        $m! {
            Tas => $crate::locks::tas::TasSpinlock<$p>,
            Spinlock => $crate::locks::spinlock::TicketSpinlock<$p>,
            Qspinlock => $crate::locks::qspinlock::McsSpinlock<$p>,
            Rwlock => $crate::locks::rwlock::RwlockT<$p>,
            Qrwlock => $crate::locks::qrwlock::Qrwlock<$p>,
            RwsemFifo => $crate::locks::rwsem_fifo::RwsemFifo<$p>,
            RwsemXadd => $crate::locks::rwsem_xadd::RwsemXadd<$p>,
            Rwsem => $crate::locks::rwsem::Rwsem<$p>,
            Mutex => $crate::locks::mutex::Mutex<$p>,
            PercpuRwsem => $crate::locks::percpu_rwsem::PercpuRwsem<$p>,
        }
    };
}

impl std::fmt::Display for LockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Generic work to run for whichever kind [`LockKind::dispatch`] selects.
pub trait LockVisitor {
    type Output;
    fn visit<L: RawRwLock + KindInfo>(self) -> Self::Output;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_clap_and_serde() {
        for kind in LockKind::ALL {
            assert_eq!(LockKind::parse(kind.name()), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }

    #[test]
    fn unknown_name_lists_the_valid_ones() {
        let err = LockKind::parse("bkl").unwrap_err();
        assert!(
            err.contains("'bkl'") && err.contains("rwsem-fifo") && err.contains("percpu-rwsem")
        );
    }
}
