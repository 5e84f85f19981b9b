//! Which kernel a world stands for, where the kernels differ in the reverse
//! map's shape or in how an operation takes its locks. Chosen per model
//! (`world.rmap`, `world.file_unlink`, `world.find_vma_cache`) and fixed for
//! the world's life.
//!
//! | setting | value | kernels | what changes |
//! |---|---|---|---|
//! | [`RmapLayout`] | `chain` (default) | 2.6.34+ (anon_vma_chain, 5beb49305251) | a forked child vma gets its own anon_vma and one AVC per ancestor level; a walk searches the folio's own anon_vma (an interval tree since 3.7, bf181b9f9d8d; a list before, which visits vmas not holding the page too) |
//! | | `list` | 2.6.2x-2.6.33 | one anon_vma per ancestor family: fork links the child's vma on the parent's anon_vma list (anon_vma_link); every page of the family points at it and a walk visits every vma on the list |
//! | [`FileUnlink`] | `batch` (default) | 2024+ (unlink_file_vma_batch) | free_pgtables unlinks up to 8 vmas of one file per i_mmap WRITE hold |
//! | | `single` | before 2024 | unlink_file_vma takes i_mmap WRITE once per vma |
//! | [`FindVmaCache`] | `none` (default) | 6.1+ (maple tree; vmacache removed, 7964cf8caa4d) | a fault's vma lookup touches no shared cache |
//! | | `task` | 3.15-6.0 (vmacache, 615d6e8756c8) | a lookup reads `mm->vmacache_seqnum`; every mmap_lock WRITE hold that changes vmas bumps it |
//! | | `mm` | before 3.15 | a lookup that misses `mm->mmap_cache` writes it: one line written by every thread faulting in another vma |

pub use crate::model::world::{FileUnlink, FindVmaCache, RmapLayout};

/// Every era setting of one world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Era {
    pub rmap: RmapLayout,
    pub file_unlink: FileUnlink,
    pub find_vma_cache: FindVmaCache,
}

impl Era {
    /// The era a model's `[world]` section asks for.
    pub fn of(spec: &crate::model::WorldSpec) -> Era {
        Era {
            rmap: spec.rmap,
            file_unlink: spec.file_unlink,
            find_vma_cache: spec.find_vma_cache,
        }
    }
}
