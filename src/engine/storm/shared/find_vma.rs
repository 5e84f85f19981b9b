//! The shared lines find_vma touches before it walks an mm's vma tree, by
//! era (`world.find_vma_cache`): none since 6.1 (the maple tree), the
//! `mm->vmacache_seqnum` every lookup reads in 3.15-6.0 (each thread's
//! vmacache itself is private memory), or, before 3.15, the one
//! `mm->mmap_cache` that a lookup missing it writes. Seeds 000 and 001 ran
//! the last: 32 threads faulting in 32 vmas of one mm, so nearly every
//! lookup misses and the line moves to the faulting CPU (Eric Dumazet's
//! point in seed 001, which vmacache later answered).

use crate::locks::platform::{AtomicInt, Ordering, Platform};
use crate::rmap::era::FindVmaCache;

/// `mm->mmap_cache` and `mm->vmacache_seqnum`, each its own line.
pub(super) struct FindVmaLines<P: Platform> {
    /// The start of the vma the last lookup found (`mm` era).
    mmap_cache: P::AtomicU32,
    /// Bumped by every mmap_lock WRITE hold (`task` era).
    seqnum: P::AtomicU32,
}

impl<P: Platform> FindVmaLines<P> {
    pub(super) fn new() -> Self {
        FindVmaLines {
            mmap_cache: P::AtomicU32::new(u32::MAX),
            seqnum: P::AtomicU32::new(0),
        }
    }

    /// What find_vma does to the shared lines for a lookup that found the
    /// vma starting at `start` (mmap_lock READ held).
    #[inline]
    pub(super) fn lookup(&self, era: FindVmaCache, start: u32) {
        match era {
            FindVmaCache::None => {}
            FindVmaCache::Task => {
                let _ = self.seqnum.load(Ordering::Relaxed);
            }
            FindVmaCache::Mm => {
                if self.mmap_cache.load(Ordering::Relaxed) != start {
                    self.mmap_cache.store(start, Ordering::Relaxed);
                }
            }
        }
    }

    /// vmacache_invalidate, once per mmap_lock WRITE hold (the model's
    /// writers all change vmas); before 3.15 the writers reset mmap_cache.
    #[inline]
    pub(super) fn invalidate(&self, era: FindVmaCache) {
        match era {
            FindVmaCache::None => {}
            FindVmaCache::Task => {
                let _ = self.seqnum.fetch_add(1, Ordering::Relaxed);
            }
            FindVmaCache::Mm => self.mmap_cache.store(u32::MAX, Ordering::Relaxed),
        }
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::platform::Native;

    #[test]
    fn each_era_touches_only_its_own_line() {
        let lines = FindVmaLines::<Native>::new();
        let state = |l: &FindVmaLines<Native>| {
            (
                l.mmap_cache.load(Ordering::Relaxed),
                l.seqnum.load(Ordering::Relaxed),
            )
        };
        lines.lookup(FindVmaCache::None, 7);
        lines.invalidate(FindVmaCache::None);
        assert_eq!(state(&lines), (u32::MAX, 0));
        // Before 3.15: a miss writes the cache, a writer resets it.
        lines.lookup(FindVmaCache::Mm, 7);
        assert_eq!(state(&lines), (7, 0));
        lines.invalidate(FindVmaCache::Mm);
        assert_eq!(state(&lines), (u32::MAX, 0));
        // vmacache: lookups only read; each writer bumps the sequence.
        lines.lookup(FindVmaCache::Task, 7);
        lines.invalidate(FindVmaCache::Task);
        lines.invalidate(FindVmaCache::Task);
        assert_eq!(state(&lines), (u32::MAX, 2));
    }
}
