//! Per mm, what a fault may read of the vmas without holding their writer's
//! lock: `vma->anon_vma` set by a first fault under mmap_lock READ, and, for
//! faults under per-VMA locks (6.4+), the vmas themselves and their locks.
//!
//! The mm's vma set ([`Mm`]) lives under its mmap_lock, so a thread holding
//! only READ has `&Mm` and cannot write a vma's anon link, yet
//! __anon_vma_prepare does exactly that, serialised by
//! `mm->page_table_lock`; and lock_vma_under_rcu reads a vma with no
//! mmap_lock at all (the maple tree under RCU). Each mm slot therefore keeps
//! one [`VmaCell`] per vma beside the Mm, all atomics:
//!
//! | field | written | read |
//! |-------|---------|------|
//! | `start`, `end`, `pgoff`, `anon_backed` | by [`VmaTable::sync`] at mmap_write_unlock, with the cell write-locked (per-VMA mode) | by any fault (lookups race; a per-VMA fault re-checks under the cell's lock) |
//! | `anon` | once, None -> Some, by the first fault under mmap_lock READ + page_table_lock ([`VmaTable::set_anon`]); or by `sync` | by faults; folded into the Mm at the next mmap_write_lock ([`VmaTable::fold`]) |
//! | `lock` (P's word) | per-VMA mode only: readers' count and the WRITE_LOCKED bit | |
//!
//! The lock word stands for 6.4's `vma->vm_lock` rw_semaphore together with
//! `vm_lock_seq`: vma_start_write ([`VmaTable::start_write`]) sets
//! WRITE_LOCKED and waits for the readers to drain (down_write), and the bit
//! stays until mmap_write_unlock (vma_end_write_all: `mm_lock_seq` moves past
//! `vm_lock_seq`); vma_start_read is a trylock that fails while it is set.
//!
//! Invariants: a cell is free iff `start == EMPTY`; in per-VMA mode, a cell
//! whose content differs from its vma in the Mm is write-locked (every
//! writer calls vma_start_write before it changes a vma, as the kernel
//! does); `anon`, once set, changes only under mmap_lock WRITE. In
//! mmap_lock mode no fault runs without mmap_lock READ, so `sync` (under
//! WRITE) may rewrite any cell and the lock word is never touched: kernels
//! before 6.4 paid nothing for it.

use super::spin::spin_until;
use crate::locks::platform::{AtomicInt, Ordering, Platform};
use crate::rmap::vma_lock::{AbortReason, VmaLockOutcome};
use crate::rmap::{AnonLink, AnonVmaId, AvcId, Backing, FamilyId, Mm, Vma};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// `start` of a free cell.
const EMPTY: u32 = u32::MAX;
/// In `lock`: write-locked (vm_lock_seq == mm_lock_seq) until mmap_write_unlock.
const WRITE_LOCKED: u32 = 1 << 31;
/// In `lock`: the readers holding it (vma_start_read).
const READERS: u32 = WRITE_LOCKED - 1;
/// Cells in the first chunk; chunk k holds `FIRST << k`.
const FIRST: usize = 8;

/// One vma as a fault sees it (a copy of the fields it needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    start: u32,
    end: u32,
    pgoff: u32,
    anon_backed: bool,
    anon: Option<AnonLink>,
}

impl Shape {
    fn of(v: &Vma) -> Shape {
        Shape {
            start: v.start,
            end: v.end,
            pgoff: v.pgoff,
            anon_backed: v.is_anon(),
            anon: v.anon,
        }
    }
}

/// `anon` packed in two words: (family, anon_vma) and (chain, chain_len);
/// chain_len >= 1 for a link, so a zero second word is None.
fn pack(l: AnonLink) -> (u64, u64) {
    debug_assert!(l.chain_len > 0);
    (
        u64::from(l.family.0) | u64::from(l.anon_vma.0) << 32,
        u64::from(l.chain.0) | u64::from(l.chain_len) << 32,
    )
}

fn unpack(lo: u64, hi: u64) -> AnonLink {
    AnonLink {
        family: FamilyId(lo as u32),
        anon_vma: AnonVmaId((lo >> 32) as u32),
        chain: AvcId(hi as u32),
        chain_len: (hi >> 32) as u32,
    }
}

/// One vma's cell; see the module doc.
struct VmaCell<P: Platform> {
    lock: P::AtomicU32,
    start: AtomicU32,
    end: AtomicU32,
    pgoff: AtomicU32,
    anon_backed: AtomicU32,
    anon_lo: AtomicU64,
    anon_hi: AtomicU64,
}

impl<P: Platform> VmaCell<P> {
    fn new() -> Self {
        VmaCell {
            lock: P::AtomicU32::new(0),
            start: AtomicU32::new(EMPTY),
            end: AtomicU32::new(0),
            pgoff: AtomicU32::new(0),
            anon_backed: AtomicU32::new(0),
            anon_lo: AtomicU64::new(0),
            anon_hi: AtomicU64::new(0),
        }
    }

    fn contains(&self, addr: u32) -> bool {
        let start = self.start.load(Ordering::Acquire);
        start != EMPTY && start <= addr && addr < self.end.load(Ordering::Relaxed)
    }

    fn anon(&self) -> Option<AnonLink> {
        match self.anon_hi.load(Ordering::Acquire) {
            0 => None,
            hi => Some(unpack(self.anon_lo.load(Ordering::Relaxed), hi)),
        }
    }

    fn store_anon(&self, anon: Option<AnonLink>) {
        let (lo, hi) = anon.map_or((0, 0), pack);
        self.anon_lo.store(lo, Ordering::Relaxed);
        self.anon_hi.store(hi, Ordering::Release);
    }

    fn shape(&self) -> Option<Shape> {
        let start = self.start.load(Ordering::Acquire);
        (start != EMPTY).then(|| Shape {
            start,
            end: self.end.load(Ordering::Relaxed),
            pgoff: self.pgoff.load(Ordering::Relaxed),
            anon_backed: self.anon_backed.load(Ordering::Relaxed) != 0,
            anon: self.anon(),
        })
    }

    /// Fill a cell (free or write-locked: nobody reads it under a lock);
    /// `start` last, so a lookup that sees it sees the rest.
    fn store(&self, s: Option<Shape>) {
        let Some(s) = s else {
            self.start.store(EMPTY, Ordering::Release);
            return;
        };
        self.end.store(s.end, Ordering::Relaxed);
        self.pgoff.store(s.pgoff, Ordering::Relaxed);
        self.anon_backed
            .store(u32::from(s.anon_backed), Ordering::Relaxed);
        self.store_anon(s.anon);
        self.start.store(s.start, Ordering::Release);
    }

    fn write_locked(&self) -> bool {
        self.lock.load(Ordering::Acquire) & WRITE_LOCKED != 0
    }
}

/// A vma held by vma_start_read; vma_end_read on drop.
pub struct VmaRead<'a, P: Platform> {
    cell: &'a VmaCell<P>,
    /// The vma as the fault may use it (anonymous, with its anon_vma).
    pub vma: Vma,
}

impl<P: Platform> Drop for VmaRead<'_, P> {
    fn drop(&mut self) {
        self.cell.lock.fetch_sub(1, Ordering::Release);
    }
}

/// Every cell of one mm; see the module doc.
pub struct VmaTable<P: Platform> {
    /// Chunk k has `FIRST << k` cells; allocated on first use, never freed,
    /// so a cell never moves while a lookup reads it.
    chunks: Box<[Chunk<P>]>,
}

/// One chunk of cells, allocated on first use.
type Chunk<P> = OnceLock<Box<[VmaCell<P>]>>;

impl<P: Platform> VmaTable<P> {
    /// Room for `max_vmas` vmas (an address space's page count bounds them).
    pub fn new(max_vmas: u32) -> Self {
        let mut n = 0;
        while FIRST * ((1 << n) - 1) < max_vmas as usize {
            n += 1;
        }
        VmaTable {
            chunks: (0..n.max(1)).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The cells allocated so far.
    fn cells(&self) -> impl Iterator<Item = &VmaCell<P>> {
        self.chunks
            .iter()
            .map_while(OnceLock::get)
            .flat_map(|c| c.iter())
    }

    /// The cell of the vma starting at `start`.
    fn cell(&self, start: u32) -> Option<&VmaCell<P>> {
        self.cells()
            .find(|c| c.start.load(Ordering::Acquire) == start)
    }

    /// A free cell, growing the table if every allocated one is in use
    /// (mmap_lock WRITE held: one grower at a time).
    fn free_cell(&self) -> &VmaCell<P> {
        if let Some(c) = self
            .cells()
            .find(|c| c.start.load(Ordering::Relaxed) == EMPTY)
        {
            return c;
        }
        let k = self.chunks.iter().take_while(|c| c.get().is_some()).count();
        let chunk = self
            .chunks
            .get(k)
            .expect("more vmas than pages in the address space");
        &chunk.get_or_init(|| (0..FIRST << k).map(|_| VmaCell::new()).collect())[0]
    }

    /// `vma->anon_vma` as a fault under mmap_lock READ sees it: the Mm's, or
    /// the one a first fault set since the last mmap_write_lock.
    pub fn anon_of(&self, vma: &Vma) -> Option<AnonLink> {
        vma.anon.or_else(|| self.cell(vma.start)?.anon())
    }

    /// __anon_vma_prepare's store under `mm->page_table_lock` (the caller
    /// holds it): set the anon link of the vma starting at `start` unless a
    /// racing first fault did; the link that stands.
    pub fn set_anon(&self, start: u32, link: AnonLink) -> AnonLink {
        let cell = self.cell(start).expect("a live vma has its cell");
        if let Some(won) = cell.anon() {
            return won;
        }
        cell.store_anon(Some(link));
        link
    }

    /// mmap_write_lock: give the Mm's vmas the anon links first faults set
    /// under READ, so every writer step sees them.
    pub fn fold(&self, mm: &mut Mm) {
        for v in mm.vmas.iter_mut().filter(|v| v.anon.is_none()) {
            v.anon = self.cell(v.start).and_then(|c| c.anon());
        }
    }

    /// vma_start_write of every vma overlapping `[start, end)` (mmap_lock
    /// WRITE held): mark it write-locked and wait for its readers to leave.
    pub fn start_write(&self, start: u32, end: u32) {
        for c in self.cells() {
            let s = c.start.load(Ordering::Relaxed);
            if s != EMPTY && s < end && start < c.end.load(Ordering::Relaxed) {
                let was = c.lock.fetch_or(WRITE_LOCKED, Ordering::Acquire);
                if was & READERS != 0 {
                    spin_until::<P>(|| c.lock.load(Ordering::Acquire) & READERS == 0);
                }
            }
        }
    }

    /// mmap_write_unlock (mmap_lock WRITE still held): make every cell match
    /// `mm` (None: the mm is gone), then, in per-VMA mode, vma_end_write_all.
    pub fn sync(&self, mm: Option<&Mm>, per_vma: bool) {
        let vmas = mm.map_or(&[][..], Mm::vmas);
        for c in self.cells() {
            let Some(s) = c.shape() else { continue };
            let now = vmas
                .binary_search_by_key(&s.start, |v| v.start)
                .ok()
                .map(|i| Shape::of(&vmas[i]));
            if now != Some(s) {
                debug_assert!(
                    !per_vma || c.write_locked(),
                    "vma {s:?} changed to {now:?} without vma_start_write"
                );
                c.store(now);
            }
        }
        for v in vmas {
            if self.cell(v.start).is_none() {
                self.free_cell().store(Some(Shape::of(v)));
            }
        }
        if per_vma {
            for c in self.cells().filter(|c| c.write_locked()) {
                c.lock.fetch_and(!WRITE_LOCKED, Ordering::Release);
            }
        }
    }

    /// lock_vma_under_rcu: find the vma holding `addr`, trylock it for READ
    /// (vma_start_read), and check under that lock that it still holds
    /// `addr`, is anonymous and has its anon_vma (6.4 handles nothing else).
    /// Err: [`VmaLockOutcome::Abort`] (fall back to mmap_lock) or
    /// [`VmaLockOutcome::Miss`] (the vma was freed between the lookup and
    /// the lock: look again).
    pub fn lock_vma_under_rcu(&self, addr: u32) -> Result<VmaRead<'_, P>, VmaLockOutcome> {
        let abort = |why| Err(VmaLockOutcome::Abort(why));
        let Some(cell) = self.cells().find(|c| c.contains(addr)) else {
            return abort(AbortReason::NoVma);
        };
        let locked = cell
            .lock
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |v| {
                (v & WRITE_LOCKED == 0).then_some(v + 1)
            })
            .is_ok();
        if !locked {
            return abort(AbortReason::Locked);
        }
        let Some(s) = cell.shape() else {
            cell.lock.fetch_sub(1, Ordering::Release);
            return Err(VmaLockOutcome::Miss);
        };
        // From here the guard unlocks on every return.
        let read = VmaRead {
            cell,
            vma: Vma {
                start: s.start,
                end: s.end,
                pgoff: s.pgoff,
                backing: Backing::Anon,
                anon: s.anon,
                vm_lock_seq: 0,
            },
        };
        if !(s.start <= addr && addr < s.end) {
            abort(AbortReason::NoVma)
        } else if !s.anon_backed {
            abort(AbortReason::NotAnon)
        } else if s.anon.is_none() {
            abort(AbortReason::NoAnonVma)
        } else {
            Ok(read)
        }
    }
}
