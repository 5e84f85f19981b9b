//! The reverse map model: the kernel's anon_vma hierarchies, anon_vma_chains,
//! i_mmap trees, page tables and pages, and the operations that change them,
//! with kernel names and semantics (mm/rmap.c, mm/vma.c, mm/memory.c,
//! kernel/fork.c, mm/vmscan.c, mm/swapfile.c; counters as of v6.1). No locking inside: every step says
//! which lock it needs ([`lock_req`]) and takes exactly the parts that lock
//! guards.
//!
//! # Lock domains
//!
//! | part                        | guarded by                         |
//! |-----------------------------|------------------------------------|
//! | [`Mm`]: one task's vmas     | its `mmap_lock` (rw_semaphore); `vma->anon_vma` also settable under mmap_lock READ + `mm->page_table_lock` |
//! | per-VMA lock state ([`vma_lock`]) | `vm_lock_seq` under mmap_lock WRITE; the vma's lock READ for a fault (6.4+) |
//! | [`AddressSpace`]: one file's i_mmap tree | its `i_mmap_rwsem`    |
//! | [`Family`]: anon_vmas + AVCs + their trees under one root | the root anon_vma's `rwsem` |
//! | page tables ([`pte`])       | the PTE page's lock (a spin word the walks take; faults and fork use CAS) |
//! | pages ([`page`]), page cache, swap map and swap cache ([`swap`]) | none: atomics |
//! | LRU lists ([`lru`])         | the zone's `lru_lock` (spinlock)   |
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
//! operations take (S: spinlock, RW: sleeping rw_semaphore):
//!
//! ```text
//! mmap_lock (RW)           READ: fault, first fault (__anon_vma_prepare)
//!   |                      WRITE: fork (parent, then child), exit, mmap,
//!   |                             munmap, split, merge, exec's RELRO mprotect
//!   +-> vma lock (RW, 6.4+) READ: fault without mmap_lock (lock_vma_under_rcu)
//!   |                       WRITE: vma_start_write under mmap_lock WRITE
//!   |                              (fork: every parent vma; split)
//!   +-> i_mmap_rwsem (RW)  READ: rmap_walk_file
//!         |                WRITE: mmap/fork/exit/split of a file vma
//!         |                       (per vma before 2024, per 8 since)
//!         +-> anon_vma->root->rwsem (RW)
//!               |          READ: page_referenced, try_to_unmap (rmap_walk_anon)
//!               |          WRITE: anon_vma_prepare (join), anon_vma_clone,
//!               |                 anon_vma_fork / anon_vma_link (list era),
//!               |                 unlink_anon_vmas, anon_vma_free,
//!               |                 split/merge re-keying
//!               +-> mm->page_table_lock (S)   __anon_vma_prepare's publish
//!               +-> PTE lock (S)   per PTE page, the walks' visit
//!                     +-> lruvec->lru_lock (S)   isolate / putback
//! ```
//!
//! Why this order: a walker starts from a page, not from an mm, so it cannot
//! take mmap_lock at all; it takes only the rmap lock (i_mmap or anon_vma) and
//! then PTLs of whatever mms it finds. Anything that changes the rmap (fork,
//! exit, split) already holds mmap_lock to stabilise the vma set, so mmap_lock
//! must come first; a vma lock is only write-locked with mmap_lock WRITE held
//! and a fault holding it takes no mmap_lock. i_mmap before anon_vma because
//! vma_prepare (split, merge, mremap) holds both for one vma and takes the
//! file's first; the spinlocks are innermost because the others sleep. In the
//! model the lru_lock is never held together with an rmap lock: reclaim
//! isolates a batch, drops it, walks, and retakes it to put pages back.
//!
//! The first fault (seed 000) runs `__anon_vma_prepare` under mmap_lock READ
//! and declares the neighbour's root WRITE (when joining it) and then
//! `mm->page_table_lock`, which orders the setters of `vma->anon_vma` among
//! concurrent faults of one mm ([`anon_vma::Prepare::locks`]). The native
//! engine still holds mmap_lock WRITE for it, which covers the
//! page_table_lock, until it gives `vma.anon` a cell writable under READ.
//!
//! # Eras
//!
//! A world stands for one kernel ([`era`]): the anon_vma layout (`chain`,
//! 2.6.34+, or the 2.6.2x `list`) and how exit unlinks file vmas (`batch`,
//! 2024+, or `single`). Swap, early-stopping walks, private file mappings,
//! the LRU and per-VMA locks are modelled as today's kernel has them, each
//! with the kernel function and version in its module.
//!
//! # Operations
//!
//! Every multi-lock kernel operation is split into the steps the kernel takes
//! under one rmap lock each: [`fork`] (per vma: anon_vma_fork under root WRITE,
//! or an i_mmap insert under i_mmap WRITE, or both for a private file vma),
//! [`unmap`] (exit and munmap: per vma unlink_anon_vmas and anon_vma_free
//! under root WRITE, per batch of file vmas unlink_file_vma under i_mmap
//! WRITE; swap entries dropped), [`split`] (__split_vma and merge), [`mmap`]
//! (anon, shared and private file), [`exec`] (segments, relocations, the RELRO
//! split), the first fault ([`anon_vma`]), faults ([`fault`]: anon, file,
//! COW, do_cow_fault, do_swap_page), walks ([`walk`]), swap ([`swap`]),
//! reclaim's LRU ([`lru`]) and per-VMA locks ([`vma_lock`]). Fork, teardown,
//! split and merge are composed from their steps once ([`compose`]), over a
//! seam that takes each step's declared locks ([`step_locks`]): the [`World`]
//! façade runs them single-threaded with no locks, an engine with its real
//! ones.

pub mod anon_vma;
pub mod build;
pub mod check;
pub mod compose;
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
pub mod sizes;
pub mod slots;
pub mod space;
pub mod split;
pub mod stats;
pub mod step_locks;
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
