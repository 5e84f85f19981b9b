//! A lock whose kind is chosen at run time: for the locks a run does not study.
//!
//! The lock under test is a type parameter, monomorphised through
//! [`LockKind::dispatch`]. A run also has locks of a second, separately chosen
//! kind (the mmap_lock per mm, rwsem by default); making that a second type
//! parameter would build every engine 8 x 8 times. One `match` per acquisition
//! costs a predictable branch, nothing next to the operation it guards.
//!
//! It is a [`RawRwLock`] like any kind, so the one guard layer serves it; what
//! a static kind says in [`super::KindInfo`] it answers by value.

use super::platform::{Native, Platform};
use super::{LockKind, RawRwLock};

macro_rules! any_lock {
    ($($variant:ident => $ty:ty,)*) => {
        /// One lock of any kind, on platform `P`.
        // Inline, not boxed: percpu-rwsem's padded slots make every variant as
        // large as it (about 1 KiB), the price of no pointer chase per acquisition.
        #[allow(clippy::large_enum_variant)]
        pub enum AnyLock<P: Platform = Native> { $($variant($ty),)* }

        /// A shared hold of an [`AnyLock`].
        pub enum AnyReadToken<P: Platform = Native> { $($variant(<$ty as RawRwLock>::ReadToken),)* }

        /// An exclusive hold of an [`AnyLock`].
        pub enum AnyWriteToken<P: Platform = Native> { $($variant(<$ty as RawRwLock>::WriteToken),)* }

        impl<P: Platform> AnyLock<P> {
            /// An unlocked lock of `kind`.
            pub fn of(kind: LockKind) -> Self {
                match kind { $(LockKind::$variant => AnyLock::$variant(<$ty as RawRwLock>::new()),)* }
            }

            pub fn kind(&self) -> LockKind {
                match self { $(AnyLock::$variant(_) => LockKind::$variant,)* }
            }
        }

        // SAFETY: every variant is a RawRwLock and each call is forwarded to
        // the variant held, with a token of that variant only.
        unsafe impl<P: Platform> RawRwLock for AnyLock<P> {
            type ReadToken = AnyReadToken<P>;
            type WriteToken = AnyWriteToken<P>;
            type Platform = P;

            /// The default kind of this build (see [`LockKind::default_kind`]).
            fn new() -> Self {
                AnyLock::of(LockKind::default_kind())
            }

            fn lock_shared(&self) -> AnyReadToken<P> {
                match self { $(AnyLock::$variant(l) => AnyReadToken::$variant(l.lock_shared()),)* }
            }

            fn lock_shared_critical(&self) -> AnyReadToken<P> {
                match self { $(AnyLock::$variant(l) => AnyReadToken::$variant(l.lock_shared_critical()),)* }
            }

            fn try_lock_shared(&self) -> Option<AnyReadToken<P>> {
                match self { $(AnyLock::$variant(l) => l.try_lock_shared().map(AnyReadToken::$variant),)* }
            }

            fn lock_exclusive(&self) -> AnyWriteToken<P> {
                match self { $(AnyLock::$variant(l) => AnyWriteToken::$variant(l.lock_exclusive()),)* }
            }

            fn try_lock_exclusive(&self) -> Option<AnyWriteToken<P>> {
                match self { $(AnyLock::$variant(l) => l.try_lock_exclusive().map(AnyWriteToken::$variant),)* }
            }

            unsafe fn unlock_shared(&self, token: AnyReadToken<P>) {
                match (self, token) {
                    // SAFETY: forwarded caller contract; the token's kind matches.
                    $((AnyLock::$variant(l), AnyReadToken::$variant(t)) => unsafe { l.unlock_shared(t) },)*
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("a token of another lock kind"),
                }
            }

            unsafe fn unlock_exclusive(&self, token: AnyWriteToken<P>) {
                match (self, token) {
                    // SAFETY: forwarded caller contract; the token's kind matches.
                    $((AnyLock::$variant(l), AnyWriteToken::$variant(t)) => unsafe { l.unlock_exclusive(t) },)*
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("a token of another lock kind"),
                }
            }

            unsafe fn downgrade(&self, token: AnyWriteToken<P>) -> AnyReadToken<P> {
                match (self, token) {
                    // SAFETY: forwarded caller contract; the token's kind matches.
                    $((AnyLock::$variant(l), AnyWriteToken::$variant(t)) => AnyReadToken::$variant(unsafe { l.downgrade(t) }),)*
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("a token of another lock kind"),
                }
            }
        }
    };
}

crate::for_each_lock_kind!(any_lock, P);

// Real atomics only: under `--cfg shuttle` locks work inside shuttle runs only.
#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;

    #[test]
    fn every_kind_excludes_a_writer_while_read_held() {
        for kind in LockKind::ALL {
            let l = <AnyLock>::of(kind);
            assert_eq!(l.kind(), kind);
            let r = l.lock_shared();
            assert!(l.try_lock_exclusive().is_none(), "{kind}");
            // SAFETY: r came from l.
            unsafe { l.unlock_shared(r) };
            // Not a trylock: percpu-rwsem's first write waits a grace period.
            let w = l.lock_exclusive();
            assert!(l.try_lock_shared().is_none(), "{kind}");
            // SAFETY: w came from l.
            let r = unsafe { l.downgrade(w) };
            // SAFETY: r came from l.
            unsafe { l.unlock_shared(r) };
            // A trylock now: percpu-rwsem's readers are still off their
            // fast path within a grace period of the last writer.
            assert!(
                l.try_lock_exclusive().is_some(),
                "{kind}: free after release"
            );
        }
    }
}
