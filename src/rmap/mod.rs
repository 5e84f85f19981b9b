//! The reverse map model: the kernel's anon_vma hierarchies, anon_vma_chains,
//! i_mmap trees, page tables and pages, and the operations that change them,
//! with kernel names and semantics (mm/rmap.c, mm/vma.c, mm/memory.c,
//! kernel/fork.c; counters as of v6.1). No locking inside: every step says
//! which lock it needs ([`lock_req`]) and takes exactly the parts that lock
//! guards.
//!
//! # Lock domains
//!
//! | part                        | guarded by                         |
//! |-----------------------------|------------------------------------|
//! | [`Mm`]: one task's vmas     | its `mmap_lock` (rw_semaphore)     |
//! | [`AddressSpace`]: one file's i_mmap tree | its `i_mmap_rwsem`    |
//! | [`Family`]: anon_vmas + AVCs + their trees under one root | the root anon_vma's `rwsem` |
//! | page tables ([`pte`])       | none: atomic PTEs (the PTL is a CAS) |
//! | pages ([`page`]), page cache | none: atomics                     |
//! | mm / family slot allocation | the engine's tasklist lock         |
//!
//! Tables never move their entries, so the engine can allocate new mms and
//! families (under its tasklist lock) while walkers read other slots: mms and
//! families live in chunked [`slots::SlotTable`]s (fixed-size chunks allocated
//! on first use, never freed), files in a slice fixed when the world is built,
//! pages in a fixed-capacity pool sized from the model ([`Capacity`]).
//!
//! # Lock order
//!
//! The order of mm/rmap.c's header comment, with the modes this model's
//! operations take:
//!
//! ```text
//! mmap_lock            READ: fault          WRITE: fork (parent, then child),
//!   |                                              exit, mmap, munmap, split, merge,
//!   |                                              first fault (see below)
//!   +-> i_mmap_rwsem   READ: rmap_walk_file WRITE: mmap/fork/exit/split of a file vma
//!         |
//!         +-> anon_vma->root->rwsem
//!               READ: page_referenced, try_to_unmap (rmap_walk_anon)
//!               WRITE: anon_vma_prepare, anon_vma_clone, anon_vma_fork,
//!                      unlink_anon_vmas, split/merge re-keying
//!                 |
//!                 +-> PTL (page table lock): here an atomic CAS on one PTE
//! ```
//!
//! Why this order: a walker starts from a page, not from an mm, so it cannot
//! take mmap_lock at all; it takes only the rmap lock (i_mmap or anon_vma) and
//! then PTLs of whatever mms it finds. Anything that changes the rmap (fork,
//! exit, split) already holds mmap_lock to stabilise the vma set, so mmap_lock
//! must come first. i_mmap before anon_vma because vma_prepare (split, merge,
//! mremap) holds both for one vma and takes the file's first; the PTL is
//! innermost because it is a spinlock and the others sleep. All rwsems here
//! are sleeping locks; the PTL and the old (pre-2.6.39) anon_vma lock spin.
//!
//! One deviation: the kernel's first fault runs `__anon_vma_prepare` under
//! mmap_lock READ plus `mm->page_table_lock` to set `vma->anon_vma`. The model
//! keeps `vma.anon` as plain data in the [`Mm`], so that step is declared
//! with mmap_lock WRITE: the same exclusion among its setters, stronger towards
//! concurrent faults in the same mm (which no role models).
//!
//! # Operations
//!
//! Every multi-lock kernel operation is split into the steps the kernel takes
//! under one rmap lock each: [`fork`] (per vma: anon_vma_fork under root WRITE
//! or an i_mmap insert under i_mmap WRITE), [`unmap`] (exit and munmap: per vma
//! unlink_anon_vmas under root WRITE, per batch of file vmas unlink_file_vma
//! under i_mmap WRITE), [`split`] (__split_vma and merge), [`mmap`], the first
//! fault ([`anon_vma`]), faults ([`fault`]) and walks ([`walk`]). The
//! [`World`] façade composes them single-threaded.

pub mod anon_vma;
pub mod build;
pub mod check;
pub mod dot;
pub mod era;
pub mod exec;
pub mod family;
pub mod fault;
pub mod fork;
pub mod ids;
pub mod interval_tree;
pub mod lock_req;
pub mod lru;
pub mod mm;
pub mod mmap;
pub mod page;
pub mod pte;
pub mod slots;
pub mod sizes;
pub mod space;
pub mod split;
pub mod stats;
pub mod swap;
pub mod unmap;
pub mod vma_lock;
pub mod walk;
pub mod world;

pub use family::{AnonVma, Avc, Family, VmaKey};
pub use ids::{AnonVmaId, AvcId, FamilyId, FileVmaId, MmId, PageId, SpaceId};
pub use lock_req::{LockReq, LockSet, LockTarget, Mode};
pub use mm::{AnonLink, Backing, Mm, Vma};
pub use page::{Mapping, PagePool};
pub use space::{AddressSpace, PageCache};
pub use stats::WorldStats;
pub use walk::{VmaVisit, WalkResult};
pub use world::{Capacity, World};
