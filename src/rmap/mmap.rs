//! mmap of anonymous memory and of shared files (mm/mmap.c, mm/vma.c
//! __mmap_region), with [`mmap_write_lock`](super::mm::mmap_write_lock) held
//! by the caller.
//!
//! An anonymous mapping takes no rmap lock: its anon_vma comes at the first
//! fault. A file mapping is linked into the file's i_mmap (vma_link_file,
//! i_mmap WRITE). The model never merges at mmap time; [`get_unmapped_area`]
//! leaves a one-page hole around each new mapping so nothing would merge.
//! munmap is composed by the caller from [`split`](super::split) and
//! [`unmap`](super::unmap).

use super::ids::{MmId, SpaceId};
use super::lock_req::{LockReq, LockSet, LockTarget};
use super::mm::{Backing, Mm, Vma};
use super::space::AddressSpace;

/// A first-fit free range of `pages` pages with a free page on each side
/// (inside `0..va_pages`), or None.
pub fn get_unmapped_area(mm: &Mm, pages: u32, va_pages: u32) -> Option<u32> {
    let mut start = 0u32;
    for v in mm.vmas() {
        if start + pages < v.start {
            return Some(start);
        }
        start = start.max(v.end + 1);
    }
    (start.checked_add(pages)? <= va_pages).then_some(start)
}

/// Map `pages` anonymous pages at `start` (no rmap lock).
pub fn mmap_anon(mm: &mut Mm, start: u32, pages: u32) {
    mm.insert(Vma {
        start,
        end: start + pages,
        pgoff: start,
        backing: Backing::Anon,
        anon: None,
        vm_lock_seq: 0,
    });
}

/// The lock [`mmap_file`] takes.
pub fn mmap_file_locks(space: SpaceId) -> LockSet {
    LockSet::one(LockReq::write(LockTarget::IMmap(space)))
}

/// Map file pages `[pgoff, pgoff + pages)` shared at `start` (i_mmap WRITE).
pub fn mmap_file(
    mm_id: MmId,
    mm: &mut Mm,
    start: u32,
    pages: u32,
    sid: SpaceId,
    pgoff: u32,
    space: &mut AddressSpace,
) {
    mmap_file_in(mm_id, mm, start, pages, sid, pgoff, space, false)
}

/// Map file pages `[pgoff, pgoff + pages)` at `start`, MAP_PRIVATE if
/// `private` (i_mmap WRITE either way: vma_link_file).
#[allow(clippy::too_many_arguments)] // the kernel's mmap_region takes as many
pub fn mmap_file_in(
    mm_id: MmId,
    mm: &mut Mm,
    start: u32,
    pages: u32,
    sid: SpaceId,
    pgoff: u32,
    space: &mut AddressSpace,
    private: bool,
) {
    assert!(
        pgoff + pages <= space.pages(),
        "mapping beyond the file's end"
    );
    let mut vma = Vma {
        start,
        end: start + pages,
        pgoff,
        backing: Backing::Anon,
        anon: None,
        vm_lock_seq: 0,
    };
    let entry = space.insert(vma.key(mm_id));
    vma.backing = Backing::File {
        space: sid,
        entry,
        private,
    };
    mm.insert(vma);
}
