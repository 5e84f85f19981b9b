//! exec of a dynamically linked binary, as unixbench execl does it over and
//! over (seed 003): the new mm maps the binary's segments MAP_PRIVATE from
//! the file (fs/binfmt_elf.c elf_load, then ld.so for the libraries), the
//! loader writes its relocations into the RW segment, then mprotects the
//! RELRO part of it read-only (glibc _dl_protect_relro), which splits the
//! file vma; the task later exits.
//!
//! | step | kernel | locks |
//! |------|--------|-------|
//! | map text, map data | mmap_region -> vma_link_file | mmap_lock WRITE; i_mmap WRITE each |
//! | read text | do_read_fault | mmap_lock READ |
//! | relocation writes | __anon_vma_prepare, do_cow_fault | mmap_lock READ; page_table_lock (+ root WRITE when joining) |
//! | RELRO mprotect | mprotect_fixup -> __split_vma | mmap_lock WRITE; root WRITE (anon_vma_clone), then vma_prepare: i_mmap WRITE then root WRITE |
//! | exit | exit_mmap | see [`super::unmap`] |
//!
//! The RELRO split is the stack of seed 003's latency report
//! (call_rwsem_down_write_failed under vma_adjust / __split_vma /
//! mprotect_fixup): the split holds the binary's i_mmap_rwsem WRITE, which
//! every other exec of the same binary also needs.

use super::ids::{MmId, SpaceId};
use super::split::SplitPlan;

/// A binary's layout in its file, in pages from pgoff 0: text (r-x), then the
/// RW segment, whose first `relro` pages become read-only after relocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binary {
    pub space: SpaceId,
    pub text: u32,
    pub relro: u32,
    /// Pages of the RW segment after the RELRO part (.data, .bss start).
    pub data: u32,
}

impl Binary {
    /// A layout for a file of `pages` pages (at least 3): half text, one
    /// RELRO page, the rest data.
    pub fn in_file(space: SpaceId, pages: u32) -> Option<Binary> {
        (pages >= 3).then(|| {
            let text = pages / 2;
            Binary {
                space,
                text,
                relro: 1,
                data: pages - text - 1,
            }
        })
    }

    /// The RW segment's pages (RELRO + data).
    pub fn rw_pages(&self) -> u32 {
        self.relro + self.data
    }
}

/// What one exec did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exec {
    pub mm: MmId,
    /// First page of the text and of the RW segment.
    pub text_start: u32,
    pub rw_start: u32,
    /// The RELRO mprotect's split, as planned before it ran (its locks).
    pub relro_split: SplitPlan,
}
