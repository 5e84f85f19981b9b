//! The atomic words a lock's state lives in, as traits, so a platform can
//! supply its own: real atomics natively, the model checker's under shuttle,
//! and the simulator's, which route every access through its cache-line
//! model.
//!
//! The methods are std's, with std's meanings and orderings; a lock written
//! against these traits reads exactly like one written against std.

use std::sync::atomic::Ordering;

/// An integer atomic word (std's `AtomicU32`, `AtomicUsize`).
pub trait AtomicInt<T: Copy>: Send + Sync + Sized + 'static {
    fn new(value: T) -> Self;
    fn load(&self, order: Ordering) -> T;
    fn store(&self, value: T, order: Ordering);
    fn swap(&self, value: T, order: Ordering) -> T;
    fn compare_exchange(
        &self,
        current: T,
        new: T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<T, T>;
    fn compare_exchange_weak(
        &self,
        current: T,
        new: T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<T, T>;
    fn fetch_add(&self, value: T, order: Ordering) -> T;
    fn fetch_sub(&self, value: T, order: Ordering) -> T;
    fn fetch_or(&self, value: T, order: Ordering) -> T;
    fn fetch_and(&self, value: T, order: Ordering) -> T;

    /// std's `fetch_update`: a load, then weak CASes until `f` declines or
    /// one succeeds. Written once here, so on every platform it costs what
    /// that loop costs (the simulator charges each access).
    #[inline]
    fn fetch_update(
        &self,
        set_order: Ordering,
        fetch_order: Ordering,
        mut f: impl FnMut(T) -> Option<T>,
    ) -> Result<T, T> {
        let mut prev = self.load(fetch_order);
        while let Some(next) = f(prev) {
            match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                Ok(x) => return Ok(x),
                Err(now) => prev = now,
            }
        }
        Err(prev)
    }
}

/// A boolean atomic word (std's `AtomicBool`).
pub trait AtomicFlag: Send + Sync + Sized + 'static {
    fn new(value: bool) -> Self;
    fn load(&self, order: Ordering) -> bool;
    fn store(&self, value: bool, order: Ordering);
}

/// Implement [`AtomicInt`] for atomic types whose inherent methods are std's.
macro_rules! forward_atomic_int {
    ($($atomic:ty => $t:ty,)*) => {$(
        impl AtomicInt<$t> for $atomic {
            #[inline(always)]
            fn new(value: $t) -> Self { <$atomic>::new(value) }
            #[inline(always)]
            fn load(&self, order: Ordering) -> $t { <$atomic>::load(self, order) }
            #[inline(always)]
            fn store(&self, value: $t, order: Ordering) { <$atomic>::store(self, value, order) }
            #[inline(always)]
            fn swap(&self, value: $t, order: Ordering) -> $t { <$atomic>::swap(self, value, order) }
            #[inline(always)]
            fn compare_exchange(&self, current: $t, new: $t, success: Ordering, failure: Ordering)
                -> Result<$t, $t> {
                <$atomic>::compare_exchange(self, current, new, success, failure)
            }
            #[inline(always)]
            fn compare_exchange_weak(&self, current: $t, new: $t, success: Ordering, failure: Ordering)
                -> Result<$t, $t> {
                <$atomic>::compare_exchange_weak(self, current, new, success, failure)
            }
            #[inline(always)]
            fn fetch_add(&self, value: $t, order: Ordering) -> $t { <$atomic>::fetch_add(self, value, order) }
            #[inline(always)]
            fn fetch_sub(&self, value: $t, order: Ordering) -> $t { <$atomic>::fetch_sub(self, value, order) }
            #[inline(always)]
            fn fetch_or(&self, value: $t, order: Ordering) -> $t { <$atomic>::fetch_or(self, value, order) }
            #[inline(always)]
            fn fetch_and(&self, value: $t, order: Ordering) -> $t { <$atomic>::fetch_and(self, value, order) }
        }
    )*};
}

/// Implement [`AtomicFlag`] for an atomic bool type whose inherent methods are std's.
macro_rules! forward_atomic_flag {
    ($atomic:ty) => {
        impl AtomicFlag for $atomic {
            #[inline(always)]
            fn new(value: bool) -> Self {
                <$atomic>::new(value)
            }
            #[inline(always)]
            fn load(&self, order: Ordering) -> bool {
                <$atomic>::load(self, order)
            }
            #[inline(always)]
            fn store(&self, value: bool, order: Ordering) {
                <$atomic>::store(self, value, order)
            }
        }
    };
}

forward_atomic_int! {
    std::sync::atomic::AtomicU32 => u32,
    std::sync::atomic::AtomicUsize => usize,
}
forward_atomic_flag!(std::sync::atomic::AtomicBool);

#[cfg(shuttle)]
forward_atomic_int! {
    shuttle::sync::atomic::AtomicU32 => u32,
    shuttle::sync::atomic::AtomicUsize => usize,
}
#[cfg(shuttle)]
forward_atomic_flag!(shuttle::sync::atomic::AtomicBool);
