//! Kernel behaviours the model must reproduce, one scenario each (mm/rmap.c,
//! mm/vma.c, kernel/fork.c; docs/kernel.md). The random-sequence test
//! (rmap_ops.rs) checks consistency; these check that the consistent world is
//! the kernel's: which anon_vma a fork reuses, what a COW fault creates, which
//! locks each step declares.

use rmap_storm::rmap::anon_vma::{find_mergeable_anon_vma, prepare_mmap_lock};
use rmap_storm::rmap::era::FileUnlink;
use rmap_storm::rmap::fault::Fault;
use rmap_storm::rmap::fork::{ForkStep, fork_locks, fork_plan};
use rmap_storm::rmap::mm::{mmap_read_lock, mmap_write_lock};
use rmap_storm::rmap::mmap::mmap_file_locks;
use rmap_storm::rmap::pte::{self, Pte};
use rmap_storm::rmap::split::{merge_plan, split_plan};
use rmap_storm::rmap::unmap::{FILE_BATCH, UnlinkStep, free_pgtables_plan};
use rmap_storm::rmap::walk::walk_lock;
use rmap_storm::rmap::{
    AnonLink, Capacity, LockReq, LockTarget, Mapping, MmId, PageId, SpaceId, World,
};

fn world() -> World {
    World::new(
        64,
        &[16],
        Capacity {
            mms: 64,
            pages: 4096,
        },
    )
}

/// A task with one anon vma of `pages` pages at 0, every page written.
fn ancestor(w: &mut World, pages: u32) -> MmId {
    let a = w.spawn();
    w.mmap_anon_at(a, 0, pages);
    for addr in 0..pages {
        w.touch(a, addr, true).unwrap();
    }
    a
}

fn link(w: &World, mm: MmId, addr: u32) -> AnonLink {
    w.mm(mm).vma(addr).unwrap().anon.unwrap()
}

fn page_at(w: &World, mm: MmId, addr: u32) -> PageId {
    pte::load(w.page_tables.pte(mm, addr).unwrap())
        .page()
        .unwrap()
}

#[test]
fn flat_fork_links_every_child_into_the_root_tree() {
    let mut w = world();
    let a = ancestor(&mut w, 4);
    let kids: Vec<MmId> = (0..20).map(|_| w.fork(a)).collect();
    let root = link(&w, a, 0);
    let f = w.family(root.family);
    // Root tree: the ancestor's vma and every child's.
    assert_eq!(f.stab(f.root(), 0, u32::MAX).count(), 21);
    // Root counts itself and 20 children; each child has its own anon_vma.
    assert_eq!(f.anon_vma(f.root()).num_children(), 21);
    for &k in &kids {
        let l = link(&w, k, 0);
        assert_eq!(l.chain_len, 2, "child of the root: 2 AVCs");
        assert_ne!(l.anon_vma, root.anon_vma);
        assert_eq!(f.anon_vma(l.anon_vma).parent(), f.root());
    }
    // An ancestor page is still shared by all: its walk visits 21 vmas.
    let r = w.page_referenced(page_at(&w, a, 2));
    assert_eq!((r.vmas_visited, r.mapped), (21, 21));
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn chain_fork_gives_depth_plus_one_avcs() {
    let mut w = world();
    let mut t = ancestor(&mut w, 2);
    for depth in 1..=6 {
        t = w.fork(t);
        assert_eq!(link(&w, t, 0).chain_len, depth + 1);
    }
    // The chain is newest first: own anon_vma, then each ancestor's, root last.
    let l = link(&w, t, 0);
    let f = w.family(l.family);
    let chain: Vec<_> = f
        .chain(Some(l.chain))
        .map(|a| f.avc(a).anon_vma())
        .collect();
    let mut path = vec![l.anon_vma];
    while *path.last().unwrap() != f.root() {
        path.push(f.anon_vma(*path.last().unwrap()).parent());
    }
    assert_eq!(chain, path);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn fork_reuses_an_anon_vma_without_vmas_and_with_one_child() {
    // A -> B -> C; B exits: B's anon_vma has no vma and one child (C's).
    let mut w = world();
    let a = ancestor(&mut w, 2);
    let b = w.fork(a);
    let c = w.fork(b);
    let b_av = link(&w, b, 0).anon_vma;
    w.exit(b);
    let f = w.family(link(&w, a, 0).family);
    assert_eq!(f.anon_vma(b_av).num_active_vmas(), 0);
    assert_eq!(f.anon_vma(b_av).num_children(), 1);
    let before = f.anon_vma_count();
    // C forks D: the clone walks C's chain oldest first and picks B's.
    let d = w.fork(c);
    let l = link(&w, d, 0);
    assert_eq!(l.anon_vma, b_av, "v3.19 reuse");
    assert_eq!(
        l.chain_len, 3,
        "D links to every anon_vma C does, nothing new"
    );
    let f = w.family(l.family);
    assert_eq!(f.anon_vma_count(), before);
    assert_eq!(f.anon_vma(b_av).num_active_vmas(), 1);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn fork_reuses_the_oldest_candidate() {
    // A -> B -> C -> D; B and C exit: both their anon_vmas are candidates,
    // and anon_vma_clone, walking D's chain oldest first, takes B's.
    let mut w = world();
    let a = ancestor(&mut w, 2);
    let b = w.fork(a);
    let c = w.fork(b);
    let d = w.fork(c);
    let (b_av, c_av) = (link(&w, b, 0).anon_vma, link(&w, c, 0).anon_vma);
    w.exit(b);
    w.exit(c);
    let e = w.fork(d);
    assert_eq!(link(&w, e, 0).anon_vma, b_av);
    assert_ne!(link(&w, e, 0).anon_vma, c_av);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn fork_never_reuses_a_live_vmas_anon_vma_or_the_root() {
    let mut w = world();
    let a = ancestor(&mut w, 2);
    let b = w.fork(a);
    // B's anon_vma has no children but B's vma is active: not reusable.
    let c = w.fork(b);
    let (lb, lc) = (link(&w, b, 0), link(&w, c, 0));
    assert_ne!(lc.anon_vma, lb.anon_vma);
    assert_eq!(lc.chain_len, 3);
    // The ancestor exits: the root has no vma, but it is its own child and
    // has B's as well, so a fork of B still makes a new anon_vma.
    w.exit(a);
    let root = w.family(lb.family).root();
    let d = w.fork(b);
    assert_ne!(link(&w, d, 0).anon_vma, root);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn cow_write_makes_a_private_page_in_the_childs_own_anon_vma() {
    let mut w = world();
    let a = ancestor(&mut w, 4);
    let b = w.fork(a);
    let shared = page_at(&w, a, 1);
    assert_eq!(w.pages.mapcount(shared), 2);
    // fork write-protected both PTEs; the child's is old (not young).
    let (pa, pb) = (
        pte::load(w.page_tables.pte(a, 1).unwrap()),
        pte::load(w.page_tables.pte(b, 1).unwrap()),
    );
    assert!(!pa.writable() && !pb.writable() && !pb.young() && pb.dirty());
    let Fault::Cow { old, new } = w.touch(b, 1, true).unwrap() else {
        panic!("expected a COW fault");
    };
    assert_eq!(old, shared);
    let lb = link(&w, b, 0);
    assert_eq!(
        w.pages.mapping(new),
        Some(Mapping::Anon {
            family: lb.family,
            anon_vma: lb.anon_vma
        })
    );
    assert_eq!(w.pages.mapcount(shared), 1);
    // The child's private page is found through the child's tree only.
    assert_eq!(w.page_referenced(new).vmas_visited, 1);
    // The parent's write to its now exclusive page reuses it in place.
    assert_eq!(w.touch(a, 1, true).unwrap(), Fault::Reuse(shared));
    assert!(pte::load(w.page_tables.pte(a, 1).unwrap()).writable());
    // The other way round: the parent COWs page 2 first, then the child's
    // write reuses the old page and moves it into the child's anon_vma
    // (folio_move_anon_rmap), so its walks no longer search the root's tree.
    let old2 = page_at(&w, a, 2);
    assert!(matches!(w.touch(a, 2, true).unwrap(), Fault::Cow { .. }));
    assert_eq!(w.page_referenced(old2).vmas_visited, 2);
    assert_eq!(w.touch(b, 2, true).unwrap(), Fault::Reuse(old2));
    assert_eq!(
        w.pages.mapping(old2),
        Some(Mapping::Anon {
            family: lb.family,
            anon_vma: lb.anon_vma
        })
    );
    assert_eq!(w.page_referenced(old2).vmas_visited, 1);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn first_fault_joins_a_split_neighbours_anon_vma() {
    let mut w = world();
    let a = w.spawn();
    w.mmap_anon_at(a, 0, 8);
    assert!(w.split(a, 4)); // mprotect of the upper half, before any fault
    w.touch(a, 0, true).unwrap();
    w.touch(a, 5, true).unwrap();
    let (lo, hi) = (link(&w, a, 0), link(&w, a, 5));
    assert_eq!((lo.family, lo.anon_vma), (hi.family, hi.anon_vma));
    assert_eq!(
        w.family(lo.family).anon_vma(lo.anon_vma).num_active_vmas(),
        2
    );
    // Merging back unlinks the upper vma's AVC.
    assert!(w.merge(a, 4));
    assert_eq!(w.family(lo.family).avc_count(), 1);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn split_rekeys_the_avcs_so_walks_find_the_new_vma() {
    let mut w = world();
    let a = ancestor(&mut w, 8);
    let b = w.fork(a);
    let page = page_at(&w, a, 6);
    assert!(w.split(b, 5));
    let mut starts = vec![];
    let f = w.family(link(&w, a, 0).family);
    for id in f.stab(f.root(), 6, 6) {
        starts.push((f.avc(id).mm(), f.avc(id).vm_start()));
    }
    assert_eq!(starts, vec![(a, 0), (b, 5)]);
    assert_eq!(w.page_referenced(page).mapped, 2);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn reclaim_leaves_a_swap_entry_in_every_pte_and_frees_the_page() {
    let mut w = world();
    let a = ancestor(&mut w, 2);
    let kids: Vec<MmId> = (0..5).map(|_| w.fork(a)).collect();
    let page = page_at(&w, a, 0);
    let r = w.reclaim(page);
    assert_eq!((r.vmas_visited, r.mapped, r.hits), (6, 6, 6));
    assert!(
        w.pages.mapping(page).is_none(),
        "freed after the last unmap"
    );
    let entry = pte::load(w.page_tables.pte(a, 0).unwrap());
    let slot = entry.swap_slot().expect("a swap entry");
    for &t in kids.iter().chain([&a]) {
        assert_eq!(pte::load(w.page_tables.pte(t, 0).unwrap()), Pte::swap(slot));
    }
    assert_eq!(w.pages.swap.count(slot), 6);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn steps_declare_the_kernels_locks() {
    let mut w = world();
    let a = ancestor(&mut w, 2);
    w.mmap_anon_at(a, 4, 2); // never faulted
    w.mmap_file_at(a, 8, SpaceId(0), 0, 4);
    let fam = link(&w, a, 0).family;
    let plan = fork_plan(w.mm(a));
    let locks: Vec<Vec<LockReq>> = plan.iter().map(|s| s.locks().iter().collect()).collect();
    assert!(matches!(plan[1], ForkStep::Bare { .. }));
    assert_eq!(
        locks,
        vec![
            vec![LockReq::write(LockTarget::AnonVmaRoot(fam))],
            vec![],
            vec![LockReq::write(LockTarget::IMmap(SpaceId(0)))],
        ]
    );
    // Walks read-lock the page's root or its file.
    w.touch(a, 8, false).unwrap();
    let anon = page_at(&w, a, 0);
    let file = page_at(&w, a, 8);
    assert_eq!(
        walk_lock(&w.pages, anon),
        Some(LockReq::read(LockTarget::AnonVmaRoot(fam)))
    );
    assert_eq!(
        walk_lock(&w.pages, file),
        Some(LockReq::read(LockTarget::IMmap(SpaceId(0))))
    );
    // A file split: vma_prepare takes i_mmap WRITE; nothing to clone.
    let immap_w = LockReq::write(LockTarget::IMmap(SpaceId(0)));
    let root_w = LockReq::write(LockTarget::AnonVmaRoot(fam));
    let p = split_plan(w.mm(a), 10).unwrap();
    assert!(p.clone.is_empty());
    assert_eq!(p.commit.iter().collect::<Vec<_>>(), vec![immap_w]);
    assert_eq!(
        mmap_file_locks(SpaceId(0)).iter().collect::<Vec<_>>(),
        vec![immap_w]
    );
    // An anon split clones under the root, then re-keys under it again.
    let p = split_plan(w.mm(a), 1).unwrap();
    assert_eq!(p.clone.iter().collect::<Vec<_>>(), vec![root_w]);
    assert_eq!(p.commit.iter().collect::<Vec<_>>(), vec![root_w]);
    // Merging back: re-key under the root, then unlink the removed vma's AVCs.
    assert!(w.split(a, 1));
    let m = merge_plan(w.mm(a), 1).unwrap();
    assert_eq!(
        (m.commit.iter().collect::<Vec<_>>(), m.unlink),
        (vec![root_w], Some(fam))
    );
    // First faults (seed 000): under mmap_lock READ, next to a root-only vma,
    // join it under its root WRITE; otherwise a new root nobody else can see
    // yet; either way then mm->page_table_lock, which orders the setters of
    // vma->anon_vma among faults holding mmap_lock READ.
    w.mmap_anon_at(a, 2, 1);
    let ptl = LockReq::write(LockTarget::PageTableLock(a));
    let join = find_mergeable_anon_vma(w.mm(a), 2);
    assert_eq!(join.locks(a).iter().collect::<Vec<_>>(), vec![root_w, ptl]);
    assert_eq!(
        find_mergeable_anon_vma(w.mm(a), 4)
            .locks(a)
            .iter()
            .collect::<Vec<_>>(),
        vec![ptl]
    );
    assert_eq!(prepare_mmap_lock(a), mmap_read_lock(a));
    assert_eq!(mmap_write_lock(a), LockReq::write(LockTarget::MmapLock(a)));
    assert_eq!(mmap_read_lock(a), LockReq::read(LockTarget::MmapLock(a)));
    // fork nests parent's then child's mmap_lock, both WRITE.
    let child = MmId(9);
    assert_eq!(
        fork_locks(a, child),
        [mmap_write_lock(a), mmap_write_lock(child)]
    );
    // Exit: one root WRITE per anon vma, one i_mmap WRITE per file batch.
    let steps = free_pgtables_plan(FileUnlink::Batch, w.mm(a).vmas());
    let locks: Vec<Vec<LockReq>> = steps.iter().map(|s| s.locks().iter().collect()).collect();
    assert_eq!(locks, vec![vec![root_w], vec![root_w], vec![immap_w]]);
}

#[test]
fn exit_unlinks_file_vmas_in_batches_of_eight() {
    let mut w = World::new(64, &[4, 4], Capacity { mms: 4, pages: 64 });
    let a = w.spawn();
    // Ten vmas of file 0 with a faulted anon vma after the third, then one
    // vma of file 1.
    let mut at = 0;
    for i in 0..10 {
        if i == 3 {
            w.mmap_anon_at(a, at, 2);
            w.touch(a, at, true).unwrap();
            at += 3;
        }
        w.mmap_file_at(a, at, SpaceId(0), 0, 4);
        at += 5;
    }
    w.mmap_file_at(a, at, SpaceId(1), 0, 4);
    let steps = free_pgtables_plan(FileUnlink::Batch, w.mm(a).vmas());
    let shape: Vec<(usize, Option<SpaceId>)> = steps
        .iter()
        .map(|s| match s {
            UnlinkStep::File { vmas, space } => (vmas.len(), Some(*space)),
            UnlinkStep::Anon { .. } => (1, None),
        })
        .collect();
    // The anon vma is unlinked as it is reached, without breaking the batch;
    // the batch flushes when full and when the file changes.
    let want = vec![
        (1, None),
        (FILE_BATCH, Some(SpaceId(0))),
        (2, Some(SpaceId(0))),
        (1, Some(SpaceId(1))),
    ];
    assert_eq!(shape, want);
    w.exit(a);
    assert!(w.spaces.iter().all(|s| s.entries().count() == 0));
    assert_eq!(w.live_families().count(), 0);
}
