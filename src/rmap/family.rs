//! One anon_vma family: the root anon_vma, every anon_vma descended from it,
//! and every anon_vma_chain linking a vma to one of them.
//!
//! Locking: everything in a [`Family`] is guarded by the root anon_vma's rwsem
//! (`anon_vma_lock_write(av)` is `down_write(&av->root->rwsem)`, mm/rmap.c), so
//! the whole family is one lock domain. Writers (fork, exit, split, first fault)
//! take it WRITE; rmap walks take it READ.
//!
//! Why a family is self-contained: `anon_vma_clone` copies the parent vma's
//! whole chain, all under one root, and a vma's own anon_vma is either in that
//! chain (reuse) or a new child of the parent's, so every AVC of one vma points
//! into one family and a walker never crosses families.

use super::era::RmapLayout;
use super::ids::{AnonVmaId, AvcId, MmId};
use super::interval_tree::{HasNode, NIL, TreeNode, TreeRoot};
use super::slots::slab_bytes;
use slab::Slab;

/// `struct anon_vma` (include/linux/rmap.h, v6.1+ counters). All fields are
/// guarded by the family's root rwsem.
#[derive(Clone, Debug)]
pub struct AnonVma {
    /// The anon_vma this one was forked from; the root is its own parent.
    pub(crate) parent: AnonVmaId,
    /// anon_vmas whose parent is this one (the root counts itself, as
    /// `__anon_vma_prepare` increments it for the self-parent link).
    pub(crate) num_children: u32,
    /// vmas whose `->anon_vma` is this one.
    pub(crate) num_active_vmas: u32,
    /// The allocation's own reference plus, on the root, one per other
    /// anon_vma of the family (`get_anon_vma(root)` in anon_vma_fork). The
    /// kernel's transient walker references (folio_get_anon_vma) are not modelled.
    pub(crate) refcount: u32,
    /// The interval tree of AVCs (`rb_root`), keyed by their vma's pgoff range.
    pub(crate) tree: TreeRoot,
}

impl AnonVma {
    pub fn parent(&self) -> AnonVmaId {
        self.parent
    }
    pub fn num_children(&self) -> u32 {
        self.num_children
    }
    pub fn num_active_vmas(&self) -> u32 {
        self.num_active_vmas
    }
    pub fn refcount(&self) -> u32 {
        self.refcount
    }
    pub fn tree(&self) -> TreeRoot {
        self.tree
    }
}

/// `struct anon_vma_chain`: links one vma to one anon_vma. 40 bytes (the
/// kernel's is 64): the tree node (24), the vma identity and start that a walker
/// needs to find the PTE without touching the mm (8), the anon_vma (4), and the
/// next AVC of the same vma (the `same_vma` list, newest first) (4).
///
/// Guarded by the family's root rwsem. `mm` and `vm_start` copy the vma's
/// fields; `__split_vma` and merges rewrite them (and the key) while holding
/// mmap_lock WRITE and the root WRITE, so a walker under the root READ sees a
/// consistent copy.
#[derive(Clone, Debug)]
pub struct Avc {
    /// Key `[vm_pgoff, vm_last_pgoff]` and links in its anon_vma's tree
    /// (`rb`, `rb_subtree_last`). Root rwsem.
    pub(crate) node: TreeNode,
    /// The vma's mm (`avc->vma->vm_mm`). Root rwsem (+ mmap_lock to change).
    pub(crate) mm: MmId,
    /// The vma's first page (`avc->vma->vm_start`). Root rwsem (+ mmap_lock).
    pub(crate) vm_start: u32,
    /// The anon_vma this AVC links to. Root rwsem.
    pub(crate) anon_vma: AnonVmaId,
    /// The next (older) AVC of the same vma (`same_vma` list), or [`NIL`].
    /// Root rwsem and the vma's mmap_lock.
    pub(crate) next_same_vma: u32,
}

impl HasNode for Avc {
    #[inline]
    fn tree_node(&self) -> &TreeNode {
        &self.node
    }
    #[inline]
    fn tree_node_mut(&mut self) -> &mut TreeNode {
        &mut self.node
    }
}

impl Avc {
    pub fn mm(&self) -> MmId {
        self.mm
    }
    pub fn vm_start(&self) -> u32 {
        self.vm_start
    }
    pub fn anon_vma(&self) -> AnonVmaId {
        self.anon_vma
    }
    /// First pgoff of the vma (the interval's start).
    pub fn pgoff(&self) -> u32 {
        self.node.start()
    }
    /// Last pgoff of the vma (inclusive).
    pub fn last_pgoff(&self) -> u32 {
        self.node.last()
    }
    pub fn next_same_vma(&self) -> Option<AvcId> {
        (self.next_same_vma != NIL).then_some(AvcId(self.next_same_vma))
    }
}

/// Where a vma sits, as its AVCs and i_mmap entry record it: the mm, the first
/// page of the vma, and its pgoff range `[pgoff, pgoff + pages - 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmaKey {
    pub mm: MmId,
    pub vm_start: u32,
    pub pgoff: u32,
    pub last_pgoff: u32,
}

impl VmaKey {
    /// The key of pages `[start, end)` of `mm` mapping pgoffs from `pgoff`.
    pub fn new(mm: MmId, start: u32, end: u32, pgoff: u32) -> Self {
        debug_assert!(start < end);
        VmaKey {
            mm,
            vm_start: start,
            pgoff,
            last_pgoff: pgoff + (end - start - 1),
        }
    }
}

/// Everything under one root anon_vma: one lock domain.
#[derive(Debug)]
pub struct Family {
    /// The root anon_vma (`anon_vma->root` of every member): always
    /// [`Family::ROOT`], the first entry of the arena. Fixed for the
    /// family's life.
    pub(crate) root: AnonVmaId,
    /// How its vmas link to it (the world's era): with
    /// [`RmapLayout::List`] the root is the only anon_vma and a walk visits
    /// every vma on it. Fixed.
    pub(crate) layout: RmapLayout,
    /// The family's anon_vmas (the kernel's anon_vma slab cache). Guarded by
    /// the root rwsem.
    pub(crate) anon_vmas: Slab<AnonVma>,
    /// The family's AVCs, which are also its trees' nodes (the
    /// anon_vma_chain slab cache). Guarded by the root rwsem.
    pub(crate) avcs: Slab<Avc>,
}

impl Family {
    /// The root's id in every family. The root is allocated first and freed
    /// last, so its id never changes: a fault can name a family's root
    /// without its lock, as the kernel reads the immutable `anon_vma->root`.
    pub const ROOT: AnonVmaId = AnonVmaId(0);

    /// A family with only its root anon_vma (`anon_vma_alloc` +
    /// `num_children++` for the self-parent link, as `__anon_vma_prepare` does).
    pub fn new_root(layout: RmapLayout) -> Self {
        let mut anon_vmas = Slab::new();
        let root = AnonVmaId(anon_vmas.vacant_key() as u32);
        anon_vmas.insert(AnonVma {
            parent: root,
            num_children: 1,
            num_active_vmas: 0,
            refcount: 1,
            tree: TreeRoot::default(),
        });
        debug_assert_eq!(root, Family::ROOT);
        Family {
            root,
            layout,
            anon_vmas,
            avcs: Slab::new(),
        }
    }

    pub fn root(&self) -> AnonVmaId {
        self.root
    }

    /// The era's layout this family was built in.
    pub fn layout(&self) -> RmapLayout {
        self.layout
    }

    pub fn anon_vma(&self, id: AnonVmaId) -> &AnonVma {
        &self.anon_vmas[id.index()]
    }

    /// The anon_vma if it is still allocated (a walker may hold a stale id).
    pub fn try_anon_vma(&self, id: AnonVmaId) -> Option<&AnonVma> {
        self.anon_vmas.get(id.index())
    }

    pub fn avc(&self, id: AvcId) -> &Avc {
        &self.avcs[id.index()]
    }

    /// Every live anon_vma, by id.
    pub fn anon_vmas(&self) -> impl Iterator<Item = (AnonVmaId, &AnonVma)> {
        self.anon_vmas.iter().map(|(i, a)| (AnonVmaId(i as u32), a))
    }

    /// Every live AVC, by id.
    pub fn avcs(&self) -> impl Iterator<Item = (AvcId, &Avc)> {
        self.avcs.iter().map(|(i, a)| (AvcId(i as u32), a))
    }

    pub fn anon_vma_count(&self) -> usize {
        self.anon_vmas.len()
    }

    pub fn avc_count(&self) -> usize {
        self.avcs.len()
    }

    /// AVCs in `av`'s tree intersecting `[first, last]`.
    pub fn stab(&self, av: AnonVmaId, first: u32, last: u32) -> impl Iterator<Item = AvcId> + '_ {
        self.anon_vmas[av.index()]
            .tree
            .stab(&self.avcs, first, last)
            .map(AvcId)
    }

    /// `anon_vma_alloc` for a child of `parent` (anon_vma_fork): takes a
    /// reference on the root and counts itself in the parent's children.
    pub(crate) fn alloc_child(&mut self, parent: AnonVmaId) -> AnonVmaId {
        let id = AnonVmaId(self.anon_vmas.insert(AnonVma {
            parent,
            num_children: 0,
            num_active_vmas: 0,
            refcount: 1,
            tree: TreeRoot::default(),
        }) as u32);
        self.anon_vmas[self.root.index()].refcount += 1;
        self.anon_vmas[parent.index()].num_children += 1;
        id
    }

    /// `anon_vma_chain_link`: a new AVC for the vma `key`, inserted in `av`'s
    /// tree and pushed on the front of the vma's chain `head` (newest first).
    pub(crate) fn link(&mut self, key: VmaKey, av: AnonVmaId, head: Option<AvcId>) -> AvcId {
        let id = self.avcs.insert(Avc {
            node: TreeNode::new(key.pgoff, key.last_pgoff),
            mm: key.mm,
            vm_start: key.vm_start,
            anon_vma: av,
            next_same_vma: head.map_or(NIL, |h| h.0),
        }) as u32;
        self.anon_vmas[av.index()].tree.insert(&mut self.avcs, id);
        AvcId(id)
    }

    /// The AVCs of one vma, newest first, starting at its chain head.
    pub fn chain(&self, head: Option<AvcId>) -> impl Iterator<Item = AvcId> + '_ {
        std::iter::successors(head, |&id| self.avcs[id.index()].next_same_vma())
    }

    /// Re-key every AVC of one vma (anon_vma_interval_tree_pre_update_vma,
    /// then post_update_vma): out of its tree, new key, back in.
    pub(crate) fn rekey_chain(&mut self, head: Option<AvcId>, key: VmaKey) {
        let ids: Vec<AvcId> = self.chain(head).collect();
        for id in ids {
            let av = self.avcs[id.index()].anon_vma;
            let tree = &mut self.anon_vmas[av.index()].tree;
            tree.remove(&mut self.avcs, id.0);
            let avc = &mut self.avcs[id.index()];
            avc.node.rekey(key.pgoff, key.last_pgoff);
            avc.mm = key.mm;
            avc.vm_start = key.vm_start;
            tree.insert(&mut self.avcs, id.0);
        }
    }

    /// `put_anon_vma` of an anon_vma whose tree emptied: free it, and drop its
    /// reference on the root (freeing the root too when that was the last).
    /// Returns true when the root went, i.e. the family is gone.
    pub(crate) fn put(&mut self, av: AnonVmaId) -> bool {
        let a = &mut self.anon_vmas[av.index()];
        a.refcount -= 1;
        if a.refcount > 0 {
            return false;
        }
        self.anon_vmas.remove(av.index());
        if av == self.root {
            return true;
        }
        self.put(self.root)
    }

    /// Bytes the AVC arena holds (capacity, vacant entries included): the
    /// figure behind `bytes_per_avc`.
    pub fn avc_bytes(&self) -> usize {
        slab_bytes(&self.avcs)
    }

    /// Bytes the anon_vma arena holds.
    pub fn anon_vma_bytes(&self) -> usize {
        slab_bytes(&self.anon_vmas)
    }

    /// Drop spare arena capacity (after building the initial world).
    pub fn shrink_to_fit(&mut self) {
        self.avcs.shrink_to_fit();
        self.anon_vmas.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avc_fits_the_kernel_budget() {
        assert_eq!(size_of::<Avc>(), 40);
        // The slab entry adds the vacant/occupied tag.
        let mut s: Slab<Avc> = Slab::with_capacity(8);
        s.insert(Avc {
            node: TreeNode::new(0, 0),
            mm: MmId(0),
            vm_start: 0,
            anon_vma: AnonVmaId(0),
            next_same_vma: NIL,
        });
        s.shrink_to_fit();
        assert_eq!(slab_bytes(&s), 48);
    }
}
