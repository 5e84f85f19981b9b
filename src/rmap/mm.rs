//! `struct mm_struct` and `struct vm_area_struct`: a task's vmas in address
//! order.
//!
//! Locking: an [`Mm`] (its vma set and every [`Vma`] field) is guarded by
//! `mm->mmap_lock`: READ to fault, WRITE to fork, exit, mmap, munmap, split or
//! merge. Fields a walker needs (start, pgoff range) are copied into the vma's
//! AVCs and i_mmap entry, so walkers never read an Mm. Its page table is not
//! here (see [`super::pte`]): PTEs are atomics touched under no mm lock.
//!
//! Addresses are page numbers within the task's address space
//! (`0..va_pages`): the model has no use for byte addresses.

use super::family::VmaKey;
use super::ids::{AnonVmaId, AvcId, FamilyId, FileVmaId, MmId, SpaceId};
use super::lock_req::{LockReq, LockTarget};

/// The mmap_lock held across every operation that changes an mm's vmas:
/// exit, mmap, munmap, split, merge. fork holds two
/// ([`fork_locks`](super::fork::fork_locks)); the first fault's
/// `__anon_vma_prepare` only READ
/// ([`prepare_mmap_lock`](super::anon_vma::prepare_mmap_lock)).
pub fn mmap_write_lock(mm: MmId) -> LockReq {
    LockReq::write(LockTarget::MmapLock(mm))
}

/// The mmap_lock a page fault holds.
pub fn mmap_read_lock(mm: MmId) -> LockReq {
    LockReq::read(LockTarget::MmapLock(mm))
}

/// What a vma maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Private anonymous memory (MAP_PRIVATE | MAP_ANONYMOUS).
    Anon,
    /// A file mapping: pages come from the file's page cache; `entry` is the
    /// vma's node in the file's i_mmap tree. MAP_SHARED (`private` false)
    /// writes the page-cache page; MAP_PRIVATE (a binary's text, data and
    /// RELRO) maps it read-only and copies it into an anon page on the first
    /// write (do_cow_fault / wp_page_copy), so such a vma also gets an
    /// anon_vma: it is in both the i_mmap tree and an anon_vma family.
    File {
        space: SpaceId,
        entry: FileVmaId,
        private: bool,
    },
}

/// A vma's reverse-map links: its anon_vma, its family (the lock it takes),
/// and its AVC chain newest first (`vma->anon_vma_chain`).
///
/// The chain's AVCs live in the family (guarded by the root); `chain_len` is
/// kept here so `find_mergeable_anon_vma` can test list_is_singular under the
/// mmap_lock alone, as the kernel does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnonLink {
    pub family: FamilyId,
    pub anon_vma: AnonVmaId,
    pub chain: AvcId,
    pub chain_len: u32,
}

/// `struct vm_area_struct`: pages `[start, end)` of the mm, mapping pgoffs
/// `[pgoff, pgoff + end - start)`.
#[derive(Clone, Debug, PartialEq, Eq)]
///
/// Every field is guarded by the mm's mmap_lock; `start`, `end` and `pgoff`
/// are copied into the vma's AVCs and i_mmap entry, which also need their
/// rmap lock (WRITE) to change.
pub struct Vma {
    /// First page.
    pub start: u32,
    /// One past the last page.
    pub end: u32,
    /// For anon vmas, the page number at mmap time (the kernel sets vm_pgoff
    /// to addr >> PAGE_SHIFT); kept through splits as the kernel does.
    pub pgoff: u32,
    pub backing: Backing,
    /// None until the first fault (anonymous vmas get an anon_vma lazily,
    /// `__anon_vma_prepare`) or, for a private file vma, the first write;
    /// always None for shared file vmas. Written under mmap_lock WRITE, or
    /// under mmap_lock READ plus `mm->page_table_lock` by the first fault.
    pub anon: Option<AnonLink>,
    /// `vm_lock_seq`: equal to the mm's `mm_lock_seq` while the vma is
    /// write-locked (see [`super::vma_lock`]). mmap_lock WRITE to change.
    pub vm_lock_seq: u32,
}

impl Vma {
    pub fn pages(&self) -> u32 {
        self.end - self.start
    }

    /// The pgoff of page `addr` (linear_page_index).
    pub fn pgoff_of(&self, addr: u32) -> u32 {
        debug_assert!(self.contains(addr));
        self.pgoff + (addr - self.start)
    }

    /// The page mapping `pgoff` in this vma (vma_address), if it is inside.
    pub fn addr_of(&self, pgoff: u32) -> Option<u32> {
        let off = pgoff.checked_sub(self.pgoff)?;
        (off < self.pages()).then(|| self.start + off)
    }

    pub fn contains(&self, addr: u32) -> bool {
        self.start <= addr && addr < self.end
    }

    /// The key its AVCs and i_mmap entry carry.
    pub fn key(&self, mm: MmId) -> VmaKey {
        VmaKey::new(mm, self.start, self.end, self.pgoff)
    }

    pub fn is_anon(&self) -> bool {
        self.backing == Backing::Anon
    }

    /// Private memory that can hold anon pages (MAP_PRIVATE anonymous or
    /// file): what `vma->anon_vma` and COW apply to.
    pub fn is_private(&self) -> bool {
        matches!(
            self.backing,
            Backing::Anon | Backing::File { private: true, .. }
        )
    }
}

/// A task's address space: vmas sorted by start, non-overlapping.
#[derive(Clone, Debug)]
pub struct Mm {
    /// The vma set (the kernel's maple tree), sorted by start. mmap_lock.
    pub(crate) vmas: Vec<Vma>,
    /// `mm_lock_seq` (6.4 per-VMA locks): bumped by each mmap_write_unlock.
    /// Starts at 1, so a new vma (`vm_lock_seq` 0) is not write-locked.
    /// mmap_lock WRITE to change.
    pub(crate) mm_lock_seq: u32,
}

impl Default for Mm {
    fn default() -> Mm {
        Mm {
            vmas: Vec::new(),
            mm_lock_seq: 1,
        }
    }
}

impl Mm {
    pub fn vmas(&self) -> &[Vma] {
        &self.vmas
    }

    /// The current `mm_lock_seq`.
    pub fn mm_lock_seq(&self) -> u32 {
        self.mm_lock_seq
    }

    /// Position of the vma containing `addr` (find_vma + containment).
    pub fn find(&self, addr: u32) -> Option<usize> {
        let i = self.vmas.partition_point(|v| v.end <= addr);
        (i < self.vmas.len() && self.vmas[i].contains(addr)).then_some(i)
    }

    pub fn vma(&self, addr: u32) -> Option<&Vma> {
        self.find(addr).map(|i| &self.vmas[i])
    }

    pub(crate) fn vma_mut(&mut self, addr: u32) -> Option<&mut Vma> {
        self.find(addr).map(|i| &mut self.vmas[i])
    }

    /// True if `[start, end)` overlaps no vma.
    pub fn is_free(&self, start: u32, end: u32) -> bool {
        let i = self.vmas.partition_point(|v| v.end <= start);
        i == self.vmas.len() || self.vmas[i].start >= end
    }

    /// Insert a vma into the sorted set (vma_iter_store); it must not overlap.
    pub(crate) fn insert(&mut self, vma: Vma) -> &mut Vma {
        assert!(self.is_free(vma.start, vma.end), "vma overlaps: {vma:?}");
        let i = self.vmas.partition_point(|v| v.start < vma.start);
        self.vmas.insert(i, vma);
        &mut self.vmas[i]
    }

    /// Take the vma that starts at `start` out of the set.
    pub(crate) fn take(&mut self, start: u32) -> Vma {
        let i = self.find(start).expect("no vma at start");
        assert_eq!(self.vmas[i].start, start);
        self.vmas.remove(i)
    }

    pub fn bytes(&self) -> usize {
        self.vmas.capacity() * size_of::<Vma>()
    }
}
