//! The anon_vma operations of mm/rmap.c (v6.1+, after 2555283eb40d split
//! `degree` into num_children and num_active_vmas), each a function over the
//! one family it locks.
//!
//! | function                 | kernel                           | lock           |
//! |--------------------------|----------------------------------|----------------|
//! | [`find_mergeable_anon_vma`] | find_mergeable_anon_vma (mm/vma.c) | mmap_lock (caller) |
//! | [`anon_vma_prepare_join`] | __anon_vma_prepare, neighbour's anon_vma | root WRITE |
//! | [`anon_vma_prepare_new`] | __anon_vma_prepare, new root   | none (unpublished) |
//! | [`anon_vma_clone`]       | anon_vma_clone                   | root WRITE     |
//! | [`anon_vma_fork_own`]    | anon_vma_fork after the clone    | root WRITE (again) |
//! | [`unlink_anon_vmas`]     | unlink_anon_vmas                 | root WRITE     |

use super::era::RmapLayout;
use super::family::{Family, VmaKey};
use super::ids::{AnonVmaId, AvcId, FamilyId, MmId};
use super::lock_req::{LockReq, LockSet, LockTarget};
use super::mm::{AnonLink, Mm, Vma};

/// An AVC chain built by a clone: its head (newest first) and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chain {
    pub head: AvcId,
    pub len: u32,
}

/// What `__anon_vma_prepare` will do for a vma's first fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepare {
    /// Reuse a neighbour's anon_vma: takes that family's root WRITE.
    Join {
        family: FamilyId,
        anon_vma: AnonVmaId,
    },
    /// Allocate a new root anon_vma: a new family nobody can see yet.
    NewRoot,
}

impl Prepare {
    /// The step's locks for a fault in `mm`: the neighbour's root WRITE when
    /// joining it, then `mm->page_table_lock` (the new root of a NewRoot is
    /// locked too in the kernel, but nobody else can see it yet).
    pub fn locks(&self, mm: MmId) -> LockSet {
        let ptl = LockReq::write(LockTarget::PageTableLock(mm));
        match *self {
            Prepare::Join { family, .. } => {
                LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(family))).with(ptl)
            }
            Prepare::NewRoot => LockSet::one(ptl),
        }
    }
}

/// The mmap_lock a first fault holds across `__anon_vma_prepare`: READ, as
/// every page fault (do_anonymous_page -> vmf_anon_prepare).
pub fn prepare_mmap_lock(mm: MmId) -> LockReq {
    LockReq::read(LockTarget::MmapLock(mm))
}

/// find_mergeable_anon_vma: the anon_vma of an adjacent vma that a merge could
/// have joined (next first, then prev, as the kernel tries them), if that vma
/// has only its own AVC (reusable_anon_vma's list_is_singular: a root).
///
/// Compatibility (anon_vma_compatible): adjacent, both anonymous, pgoffs
/// contiguous. The model has no vm_flags or mempolicy; mprotect splits differ
/// only in access flags, which the kernel ignores here too.
pub fn find_mergeable_anon_vma(mm: &Mm, addr: u32) -> Prepare {
    find_mergeable_anon_vma_by(mm, addr, |v| v.anon)
}

/// [`find_mergeable_anon_vma`] reading each neighbour's `vma->anon_vma`
/// through `anon_of`: for a caller holding mmap_lock READ, under which a
/// racing first fault may have set a neighbour's link where `&Mm` cannot
/// show it (an engine keeps such links beside the mm).
pub fn find_mergeable_anon_vma_by(
    mm: &Mm,
    addr: u32,
    anon_of: impl Fn(&Vma) -> Option<AnonLink>,
) -> Prepare {
    let Some(i) = mm.find(addr) else {
        return Prepare::NewRoot;
    };
    let vmas = mm.vmas();
    let vma = &vmas[i];
    let compatible = |a: &Vma, b: &Vma| {
        a.end == b.start && a.is_anon() && b.is_anon() && b.pgoff == a.pgoff + a.pages()
    };
    let reusable = |v: &Vma| anon_of(v).filter(|l| l.chain_len == 1);
    let next = vmas.get(i + 1).filter(|n| compatible(vma, n));
    let prev = i
        .checked_sub(1)
        .map(|p| &vmas[p])
        .filter(|p| compatible(p, vma));
    next.and_then(reusable)
        .or_else(|| prev.and_then(reusable))
        .map_or(Prepare::NewRoot, |l| Prepare::Join {
            family: l.family,
            anon_vma: l.anon_vma,
        })
}

/// __anon_vma_prepare joining a neighbour's anon_vma (root WRITE).
pub fn anon_vma_prepare_join(
    mm: MmId,
    vma: &mut Vma,
    family_id: FamilyId,
    family: &mut Family,
    anon_vma: AnonVmaId,
) {
    assert!(vma.anon.is_none() && vma.is_private());
    let head = family.link(vma.key(mm), anon_vma, None);
    family.anon_vmas[anon_vma.index()].num_active_vmas += 1;
    vma.anon = Some(AnonLink {
        family: family_id,
        anon_vma,
        chain: head,
        chain_len: 1,
    });
}

/// __anon_vma_prepare with a new root in `layout`: the returned family is to
/// be stored at `family_id` (the kernel locks the new root, but nobody else
/// can reach it).
pub fn anon_vma_prepare_new(
    layout: RmapLayout,
    mm: MmId,
    vma: &mut Vma,
    family_id: FamilyId,
) -> Family {
    let mut family = Family::new_root(layout);
    let root = family.root();
    anon_vma_prepare_join(mm, vma, family_id, &mut family, root);
    family
}

/// anon_vma_clone: link `dst` to every anon_vma `src` is linked to, oldest
/// first (so `dst`'s chain is newest first too), all under one root WRITE.
///
/// With `dst_anon_vma` None (fork), the first anon_vma with
/// `num_children < 2 && num_active_vmas == 0` is reused as dst's own: such an
/// anon_vma's vma is gone and it has at most one child, so reusing it keeps the
/// hierarchy from growing one level per fork generation (7a3ef208e662, v3.19).
/// The root is never picked: it is its own child and, when src is not the
/// root's vma, has another child too. With `dst_anon_vma` Some (split), dst
/// keeps src's anon_vma. Either way the chosen anon_vma gains an active vma.
pub fn anon_vma_clone(
    family: &mut Family,
    dst: VmaKey,
    src: &AnonLink,
    dst_anon_vma: Option<AnonVmaId>,
) -> (Chain, Option<AnonVmaId>) {
    let mut src_chain: Vec<AvcId> = family.chain(Some(src.chain)).collect();
    src_chain.reverse();
    let mut chosen = dst_anon_vma;
    let mut head = None;
    for &pavc in &src_chain {
        let av = family.avc(pavc).anon_vma;
        head = Some(family.link(dst, av, head));
        let a = family.anon_vma(av);
        if chosen.is_none() && a.num_children < 2 && a.num_active_vmas == 0 {
            chosen = Some(av);
        }
    }
    if let Some(av) = chosen {
        family.anon_vmas[av.index()].num_active_vmas += 1;
    }
    let chain = Chain {
        head: head.expect("a linked vma has at least one AVC"),
        len: src_chain.len() as u32,
    };
    (chain, chosen)
}

/// The second half of anon_vma_fork when the clone reused nothing: a new
/// anon_vma, child of the parent vma's, linked to the child vma (root WRITE,
/// taken a second time). Returns the child vma's complete link.
pub fn anon_vma_fork_own(
    family: &mut Family,
    family_id: FamilyId,
    child: VmaKey,
    parent_anon_vma: AnonVmaId,
    chain: Chain,
) -> AnonLink {
    let av = family.alloc_child(parent_anon_vma);
    family.anon_vmas[av.index()].num_active_vmas += 1;
    let head = family.link(child, av, Some(chain.head));
    AnonLink {
        family: family_id,
        anon_vma: av,
        chain: head,
        chain_len: chain.len + 1,
    }
}

/// anon_vma_link (2.6.2x fork, root WRITE): the child's copy of a vma joins
/// the parent vma's anon_vma list itself: no anon_vma of its own, one link.
/// Every page of the family keeps pointing at that anon_vma, so every walk
/// of any of them visits the child's vma too.
pub fn anon_vma_link(family: &mut Family, child: VmaKey, parent: &AnonLink) -> AnonLink {
    debug_assert_eq!(family.layout(), RmapLayout::List);
    let head = family.link(child, parent.anon_vma, None);
    family.anon_vmas[parent.anon_vma.index()].num_active_vmas += 1;
    AnonLink {
        chain: head,
        chain_len: 1,
        ..*parent
    }
}

/// Whether a family survived an unlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FamilyFate {
    Alive,
    /// The root anon_vma was freed: the family's slot can be released.
    Gone,
}

/// unlink_anon_vmas then anon_vma_free of every anon_vma it emptied, as one
/// call (an engine that holds the root WRITE across both steps; see
/// [`unlink_avcs`] and [`anon_vma_free`] for the two holds the kernel takes).
pub fn unlink_anon_vmas(vma: &mut Vma, family: &mut Family) -> FamilyFate {
    let emptied = unlink_avcs(vma, family);
    anon_vma_free(family, &emptied)
}

/// unlink_anon_vmas' locked pass (root WRITE once for the whole chain): take
/// every AVC of the vma out of its tree; an anon_vma whose tree empties stops
/// counting as its parent's child. Clears `vma.anon`. Returns the emptied
/// anon_vmas, newest first, for [`anon_vma_free`].
pub fn unlink_avcs(vma: &mut Vma, family: &mut Family) -> Vec<AnonVmaId> {
    let link = vma.anon.take().expect("vma has no anon_vma");
    let chain: Vec<AvcId> = family.chain(Some(link.chain)).collect();
    let mut emptied = Vec::new();
    for id in chain {
        let av = family.avc(id).anon_vma;
        let a = &mut family.anon_vmas[av.index()];
        a.tree.remove(&mut family.avcs, id.0);
        if a.tree.is_empty() {
            let parent = a.parent;
            family.anon_vmas[parent.index()].num_children -= 1;
            emptied.push(av);
        }
        family.avcs.remove(id.index());
    }
    family.anon_vmas[link.anon_vma.index()].num_active_vmas -= 1;
    emptied
}

/// The lock anon_vma_free takes (and drops at once) before freeing an
/// anon_vma: the root WRITE, which the kernel takes only when
/// `rwsem_is_locked(&root->rwsem)`, so that a folio_lock_anon_vma_read that
/// found the anon_vma under RCU and is taking the root lock finishes first.
/// The model frees arena entries of the family, which needs the lock anyway:
/// an engine takes it every time (under contention, when the kernel takes it
/// too, the cost is the same; uncontended it is one free acquisition).
pub fn anon_vma_free_locks(family: FamilyId) -> LockSet {
    LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(family)))
}

/// put_anon_vma of each anon_vma [`unlink_avcs`] emptied (children before
/// the ancestors they pin), freeing it and dropping its reference on the
/// root (anon_vma_free; [`anon_vma_free_locks`]).
pub fn anon_vma_free(family: &mut Family, emptied: &[AnonVmaId]) -> FamilyFate {
    let mut fate = FamilyFate::Alive;
    for &av in emptied {
        let a = family.anon_vma(av);
        debug_assert!(
            a.num_children == 0 && a.num_active_vmas == 0,
            "{av:?}: {a:?}"
        );
        if family.put(av) {
            fate = FamilyFate::Gone;
        }
    }
    fate
}
