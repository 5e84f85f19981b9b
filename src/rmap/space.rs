//! Files: `struct address_space`'s i_mmap tree (one lock domain per file) and
//! its page cache (lock-free slots).
//!
//! Locking: an [`AddressSpace`] (the i_mmap tree and its entries) is guarded by
//! `mapping->i_mmap_rwsem`: WRITE to link/unlink/re-key a vma (mmap, fork,
//! exit, split), READ for rmap_walk_file. The [`PageCache`] stands for the
//! xarray, which the kernel reads under RCU and fills under the xa_lock, not
//! under i_mmap_rwsem: here each slot is an atomic page id filled by CAS, so a
//! fault never takes the i_mmap lock, as in the kernel.

use super::family::VmaKey;
use super::ids::{FileVmaId, MmId, PageId};
use super::interval_tree::{HasNode, NIL, TreeNode, TreeRoot};
use super::slots::slab_bytes;
use slab::Slab;
use std::sync::atomic::{AtomicU32, Ordering};

/// One file vma in its file's i_mmap tree (the kernel links the vma itself via
/// `vma->shared.rb`; this entry carries what a walker needs: 32 bytes).
#[derive(Clone, Debug)]
pub struct FileVma {
    /// Key `[vm_pgoff, vm_last_pgoff]` and tree links (`vma->shared.rb`).
    /// i_mmap_rwsem.
    pub(crate) node: TreeNode,
    /// The vma's mm. i_mmap_rwsem (+ mmap_lock to change).
    pub(crate) mm: MmId,
    /// The vma's first page. i_mmap_rwsem (+ mmap_lock to change).
    pub(crate) vm_start: u32,
}

impl HasNode for FileVma {
    #[inline]
    fn tree_node(&self) -> &TreeNode {
        &self.node
    }
    #[inline]
    fn tree_node_mut(&mut self) -> &mut TreeNode {
        &mut self.node
    }
}

impl FileVma {
    pub fn mm(&self) -> MmId {
        self.mm
    }
    pub fn vm_start(&self) -> u32 {
        self.vm_start
    }
    pub fn pgoff(&self) -> u32 {
        self.node.start()
    }
    pub fn last_pgoff(&self) -> u32 {
        self.node.last()
    }
}

/// A file's i_mmap: every vma mapping it, in an interval tree by pgoff range.
/// Everything here is guarded by the file's i_mmap_rwsem.
#[derive(Debug)]
pub struct AddressSpace {
    /// File size in pages. Fixed.
    pub(crate) pages: u32,
    /// The i_mmap tree's root (`mapping->i_mmap`). i_mmap_rwsem.
    pub(crate) tree: TreeRoot,
    /// The tree's nodes, one per vma mapping the file. i_mmap_rwsem.
    pub(crate) entries: Slab<FileVma>,
}

impl AddressSpace {
    pub fn new(pages: u32) -> Self {
        AddressSpace {
            pages,
            tree: TreeRoot::default(),
            entries: Slab::new(),
        }
    }

    /// File size in pages.
    pub fn pages(&self) -> u32 {
        self.pages
    }

    pub fn entry(&self, id: FileVmaId) -> &FileVma {
        &self.entries[id.index()]
    }

    pub fn entries(&self) -> impl Iterator<Item = (FileVmaId, &FileVma)> {
        self.entries.iter().map(|(i, e)| (FileVmaId(i as u32), e))
    }

    pub fn tree(&self) -> TreeRoot {
        self.tree
    }

    /// Entries intersecting `[first, last]` (vma_interval_tree_foreach).
    pub fn stab(&self, first: u32, last: u32) -> impl Iterator<Item = FileVmaId> + '_ {
        self.tree.stab(&self.entries, first, last).map(FileVmaId)
    }

    /// vma_interval_tree_insert.
    pub(crate) fn insert(&mut self, key: VmaKey) -> FileVmaId {
        let id = self.entries.insert(FileVma {
            node: TreeNode::new(key.pgoff, key.last_pgoff),
            mm: key.mm,
            vm_start: key.vm_start,
        }) as u32;
        self.tree.insert(&mut self.entries, id);
        FileVmaId(id)
    }

    /// vma_interval_tree_remove.
    pub(crate) fn remove(&mut self, id: FileVmaId) {
        self.tree.remove(&mut self.entries, id.0);
        self.entries.remove(id.index());
    }

    /// Remove, re-key, re-insert (what vma_prepare/vma_complete do around a
    /// split or merge).
    pub(crate) fn rekey(&mut self, id: FileVmaId, key: VmaKey) {
        self.tree.remove(&mut self.entries, id.0);
        let e = &mut self.entries[id.index()];
        e.node.rekey(key.pgoff, key.last_pgoff);
        e.mm = key.mm;
        e.vm_start = key.vm_start;
        self.tree.insert(&mut self.entries, id.0);
    }

    pub fn bytes(&self) -> usize {
        slab_bytes(&self.entries)
    }
}

/// A file's cached pages by index: page id or empty. Lock-free (see module doc).
#[derive(Debug)]
pub struct PageCache {
    /// Page id per file index, or NIL. Atomics (no lock).
    slots: Box<[AtomicU32]>,
}

impl PageCache {
    pub fn new(pages: u32) -> Self {
        PageCache {
            slots: (0..pages).map(|_| AtomicU32::new(NIL)).collect(),
        }
    }

    /// The cached page at `index`, if any (filemap_get_folio).
    pub fn get(&self, index: u32) -> Option<PageId> {
        match self.slots[index as usize].load(Ordering::Acquire) {
            NIL => None,
            p => Some(PageId(p)),
        }
    }

    /// Publish `page` at an empty `index`; on a lost race, the winner's page.
    pub fn insert(&self, index: u32, page: PageId) -> Result<(), PageId> {
        self.slots[index as usize]
            .compare_exchange(NIL, page.0, Ordering::AcqRel, Ordering::Acquire)
            .map(drop)
            .map_err(PageId)
    }

    /// Drop `page` from `index` if it is still there (reclaim's
    /// __remove_mapping); false if someone replaced it.
    pub fn remove(&self, index: u32, page: PageId) -> bool {
        self.slots[index as usize]
            .compare_exchange(page.0, NIL, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    pub fn bytes(&self) -> usize {
        self.slots.len() * size_of::<AtomicU32>()
    }
}
