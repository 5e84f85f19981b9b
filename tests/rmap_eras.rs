//! The kernel eras and behaviours of issue 11, one scenario each: the 2.6.2x
//! anon_vma list, swap entries and swap-in, early-stopping walks,
//! anon_vma_free's own step, the file unlink eras, private file mappings and
//! exec's RELRO split. Each test fails on the wrong algorithm with a message.

use rmap_storm::rmap::anon_vma::{self, anon_vma_free_locks};
use rmap_storm::rmap::era::{FileUnlink, RmapLayout};
use rmap_storm::rmap::exec::Binary;
use rmap_storm::rmap::fault::Fault;
use rmap_storm::rmap::pte::{self, Pte};
use rmap_storm::rmap::unmap::{UnlinkStep, free_pgtables_plan};
use rmap_storm::rmap::{
    Backing, Capacity, Family, LockReq, LockTarget, Mapping, MmId, PageId, SpaceId, World,
};

fn world(layout: RmapLayout) -> World {
    let mut w = World::new(
        64,
        &[16],
        Capacity {
            mms: 64,
            pages: 4096,
        },
    );
    w.era.rmap = layout;
    w
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

fn page_at(w: &World, mm: MmId, addr: u32) -> PageId {
    pte::load(w.page_tables.pte(mm, addr).unwrap())
        .page()
        .unwrap_or_else(|| panic!("{mm:?}@{addr} maps no page"))
}

fn anon_vma_of(w: &World, page: PageId) -> rmap_storm::rmap::AnonVmaId {
    match w.pages.mapping(page) {
        Some(Mapping::Anon { anon_vma, .. }) => anon_vma,
        other => panic!("{page:?} is not anon: {other:?}"),
    }
}

#[test]
fn list_layout_puts_every_childs_vma_and_page_on_one_anon_vma() {
    let mut w = world(RmapLayout::List);
    let a = ancestor(&mut w, 4);
    let kids: Vec<MmId> = (0..20).map(|_| w.fork(a)).collect();
    // A child's COW copy stays on the family's only anon_vma (2.6.2x
    // do_wp_page: page_add_new_anon_rmap with the vma's anon_vma).
    assert!(matches!(
        w.touch(kids[7], 1, true).unwrap(),
        Fault::Cow { .. }
    ));
    let fam = w.mm(a).vmas()[0].anon.unwrap().family;
    let f = w.family(fam);
    assert_eq!(f.anon_vma_count(), 1, "no per-child anon_vmas");
    assert_eq!(f.avc_count(), 21, "one link per vma");
    for &k in &kids {
        let l = w.mm(k).vmas()[0].anon.unwrap();
        assert_eq!((l.anon_vma, l.chain_len), (Family::ROOT, 1));
    }
    let private = page_at(&w, kids[7], 1);
    assert_eq!(anon_vma_of(&w, private), Family::ROOT);
    // Its walk visits the list until it finds the one mapping: the 8th
    // child's vma, 9th on the list (the ancestor's is first).
    let r = w.page_referenced(private);
    assert_eq!((r.vmas_visited, r.mapped), (9, 1));
    assert_eq!(w.check(), Ok(()));
    // The same fork in the chain layout: the copy is the child's own and its
    // walk visits one vma.
    let mut c = world(RmapLayout::Chain);
    let a = ancestor(&mut c, 4);
    let kids: Vec<MmId> = (0..20).map(|_| c.fork(a)).collect();
    c.touch(kids[7], 1, true).unwrap();
    let r = c.page_referenced(page_at(&c, kids[7], 1));
    assert_eq!((r.vmas_visited, r.mapped), (1, 1));
}

#[test]
fn a_list_walk_visits_vmas_that_do_not_hold_the_page() {
    let mut w = world(RmapLayout::List);
    let a = ancestor(&mut w, 8);
    let k = w.fork(a);
    // Split the child's vma: both halves stay on the list, one of them
    // cannot hold page 6 (pgoff 6).
    assert!(w.split(k, 4));
    let p = page_at(&w, a, 6);
    w.reclaim(page_at(&w, a, 0)); // unrelated page
    // Ancestor and child map page 6: the child's lower half costs a visit.
    let r = w.page_referenced(p);
    assert_eq!((r.mapped, r.vmas_visited), (2, 3), "{r:?}");
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn page_referenced_stops_once_every_mapping_was_found() {
    let mut w = world(RmapLayout::Chain);
    let a = ancestor(&mut w, 2);
    let kids: Vec<MmId> = (0..10).map(|_| w.fork(a)).collect();
    for &k in &kids {
        w.touch(k, 0, true).unwrap(); // every child COWs page 0 away
    }
    let p = page_at(&w, a, 0);
    let f = w.family(w.mm(a).vmas()[0].anon.unwrap().family);
    assert_eq!(
        f.stab(f.root(), 0, 0).count(),
        11,
        "the root tree holds every vma"
    );
    let r = w.page_referenced(p);
    assert_eq!(
        (r.mapped, r.vmas_visited),
        (1, 1),
        "stops after the ancestor's vma"
    );
    // try_to_unmap stops once the page is unmapped: the first vma again.
    let r = w.reclaim(p);
    assert_eq!((r.mapped, r.vmas_visited), (1, 1));
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn swap_in_reads_once_then_hits_the_swap_cache_and_keeps_the_page_on_the_root() {
    let mut w = world(RmapLayout::Chain);
    let a = ancestor(&mut w, 2);
    let kids: Vec<MmId> = (0..3).map(|_| w.fork(a)).collect();
    let old = page_at(&w, a, 0);
    w.reclaim(old);
    let slot = pte::load(w.page_tables.pte(a, 0).unwrap())
        .swap_slot()
        .expect("a swap entry");
    assert_eq!(w.pages.swap.count(slot), 4);
    let Fault::SwapIn {
        page, cache_hit, ..
    } = w.touch(kids[0], 0, false).unwrap()
    else {
        panic!("not a swap-in")
    };
    assert!(!cache_hit, "the first faulter reads the page in");
    assert_eq!(
        anon_vma_of(&w, page),
        Family::ROOT,
        "a shared swap-in is homed on the root"
    );
    let Fault::SwapIn {
        page: p2,
        cache_hit,
        ..
    } = w.touch(kids[1], 0, false).unwrap()
    else {
        panic!("not a swap-in")
    };
    assert!(
        cache_hit && p2 == page,
        "the second faulter hits the swap cache"
    );
    assert_eq!(w.pages.swap.count(slot), 2);
    // The shared page walks the root's tree (every vma of the family, the
    // ancestor's first), stopping at its second mapping: the third vma.
    let r = w.page_referenced(page);
    assert_eq!((r.mapped, r.vmas_visited), (2, 3), "{r:?}");
    assert_eq!(w.check(), Ok(()));
    // A write to a shared swapped page copies it (do_swap_page -> do_wp_page).
    let Fault::SwapIn {
        cow: Some(copy), ..
    } = w.touch(kids[2], 0, true).unwrap()
    else {
        panic!("a write to a shared swap entry must COW")
    };
    assert_ne!(copy, page);
    assert_eq!(w.pages.swap.count(slot), 1);
    // The last entry goes with its task: the slot is freed and the swap
    // cache lets the page go.
    w.exit(a);
    assert!(
        !w.pages.swap.is_used(slot),
        "slot freed with its last entry"
    );
    assert_eq!(w.pages.swap_slot(page), None);
    assert_eq!(w.pages.swap.used(), 0);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn an_exclusive_swap_in_is_homed_on_the_vmas_own_anon_vma() {
    let mut w = world(RmapLayout::Chain);
    let a = ancestor(&mut w, 2);
    let k = w.fork(a);
    w.touch(k, 1, true).unwrap(); // the child's own copy
    let own = page_at(&w, k, 1);
    let child_av = w.mm(k).vmas()[0].anon.unwrap().anon_vma;
    assert_eq!(anon_vma_of(&w, own), child_av);
    w.reclaim(own);
    let Fault::SwapIn {
        page,
        cache_hit: false,
        cow: None,
    } = w.touch(k, 1, true).unwrap()
    else {
        panic!("an exclusive write swap-in maps the page writable")
    };
    assert_eq!(anon_vma_of(&w, page), child_av);
    assert!(pte::load(w.page_tables.pte(k, 1).unwrap()).writable());
    assert_eq!(w.pages.swap.used(), 0, "the only entry went: slot freed");
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn fork_copies_swap_entries_and_munmap_drops_them() {
    let mut w = world(RmapLayout::Chain);
    let a = ancestor(&mut w, 2);
    let p = page_at(&w, a, 0);
    w.reclaim(p);
    let slot = pte::load(w.page_tables.pte(a, 0).unwrap())
        .swap_slot()
        .unwrap();
    let k = w.fork(a);
    assert_eq!(pte::load(w.page_tables.pte(k, 0).unwrap()), Pte::swap(slot));
    assert_eq!(w.pages.swap.count(slot), 2);
    w.munmap(k, 0, 1);
    assert_eq!(w.pages.swap.count(slot), 1);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn anon_vma_free_is_a_step_of_its_own_under_the_root_write_lock() {
    let mut w = world(RmapLayout::Chain);
    let a = ancestor(&mut w, 2);
    let k = w.fork(a);
    let fam = w.mm(k).vmas()[0].anon.unwrap().family;
    assert_eq!(
        anon_vma_free_locks(fam).iter().collect::<Vec<_>>(),
        vec![LockReq::write(LockTarget::AnonVmaRoot(fam))]
    );
    // The unlink pass empties the child's anon_vma but does not free it.
    let mut vma = w.mm(k).vmas()[0].clone();
    let before = w.family(fam).anon_vma_count();
    let mut f = w.families.get_mut(fam.index()).unwrap().take().unwrap();
    let emptied = anon_vma::unlink_avcs(&mut vma, &mut f);
    assert_eq!(emptied.len(), 1);
    assert_eq!(f.anon_vma_count(), before, "freed only by anon_vma_free");
    assert_eq!(
        anon_vma::anon_vma_free(&mut f, &emptied),
        anon_vma::FamilyFate::Alive
    );
    assert_eq!(f.anon_vma_count(), before - 1);
}

#[test]
fn file_unlink_single_takes_i_mmap_once_per_vma() {
    let mut w = world(RmapLayout::Chain);
    let a = w.spawn();
    for i in 0..10 {
        w.mmap_file_at(a, i * 2, SpaceId(0), 0, 1);
    }
    let vmas = w.mm(a).vmas();
    let files = |u| {
        free_pgtables_plan(u, vmas)
            .iter()
            .map(|s| match s {
                UnlinkStep::File { vmas, .. } => vmas.len(),
                UnlinkStep::Anon { .. } => panic!("no anon vma here"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(files(FileUnlink::Batch), vec![8, 2]);
    assert_eq!(files(FileUnlink::Single), vec![1; 10]);
}

#[test]
fn exec_relro_split_takes_i_mmap_write_then_the_root_write() {
    let mut w = world(RmapLayout::Chain);
    let bin = Binary::in_file(SpaceId(0), 16).unwrap();
    let e = w.exec(bin).unwrap();
    let rw = w.mm(e.mm).vma(e.rw_start).unwrap();
    let Backing::File { private: true, .. } = rw.backing else {
        panic!("the RW segment is a private file mapping: {rw:?}")
    };
    let fam = rw
        .anon
        .expect("relocations gave the data vma an anon_vma")
        .family;
    let immap_w = LockReq::write(LockTarget::IMmap(SpaceId(0)));
    let root_w = LockReq::write(LockTarget::AnonVmaRoot(fam));
    assert_eq!(
        e.relro_split.commit.iter().collect::<Vec<_>>(),
        vec![immap_w, root_w],
        "vma_prepare: i_mmap WRITE, then the anon_vma root WRITE"
    );
    assert_eq!(e.relro_split.clone.iter().collect::<Vec<_>>(), vec![root_w]);
    // Both halves sit in the file's i_mmap and in the family.
    assert_eq!(w.spaces[0].entries().count(), 3, "text + RELRO + data");
    let relro = w.mm(e.mm).vma(e.rw_start).unwrap();
    assert_eq!(relro.end, e.rw_start + bin.relro);
    assert_eq!(w.check(), Ok(()));
    // Text pages are the page cache's, mapped read-only; RW pages are copies.
    let text = pte::load(w.page_tables.pte(e.mm, e.text_start).unwrap());
    assert!(!text.writable());
    assert!(matches!(
        w.pages.mapping(text.page().unwrap()),
        Some(Mapping::File { .. })
    ));
    let data = page_at(&w, e.mm, e.rw_start);
    assert!(matches!(w.pages.mapping(data), Some(Mapping::Anon { .. })));
    // A fork of the exec'd task shares both; the exit of both cleans up.
    let k = w.fork(e.mm);
    assert_eq!(w.spaces[0].entries().count(), 6);
    assert_eq!(w.check(), Ok(()));
    w.exit(k);
    w.exit(e.mm);
    assert_eq!(w.spaces[0].entries().count(), 0);
    assert_eq!(w.live_families().count(), 0);
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn bad_era_values_are_one_line_naming_the_key_and_the_allowed_set() {
    for (set, allowed) in [
        ("world.rmap=tree", "(allowed: chain, list)"),
        ("world.file_unlink=batched", "(allowed: batch, single)"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
            .args(["inspect", "models/aim7-fork-storm.toml", "--set", set])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let key = set.split('=').next().unwrap();
        assert!(
            err.contains(key) && err.trim_end().ends_with(allowed),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn lru_rotates_referenced_pages_keeps_contended_ones_and_reclaims_old_ones() {
    let mut w = world(RmapLayout::Chain);
    let a = ancestor(&mut w, 40);
    let _kids: Vec<MmId> = (0..3).map(|_| w.fork(a)).collect();
    assert_eq!(w.check_lru(), Ok(()));
    // Pass 1: the 32 oldest inactive pages were all just written (young):
    // each walk finds a young PTE and the page rotates to the active list.
    let s = w.shrink_lru(|_| false);
    assert_eq!((s.inactive, s.reclaimed), (32, 0));
    assert_eq!(w.lru.stats.activated, 32);
    // Pass 2: 8 pages are left inactive (< 32), so the active list is
    // scanned first: its 32 pages were aged by pass 1's walks and
    // deactivate. Then the inactive tail: the 8 never-walked (young) pages
    // rotate, and 24 of the deactivated (old) pages go to swap.
    let s = w.shrink_lru(|_| false);
    assert_eq!(s.active, 32);
    assert_eq!(w.lru.stats.deactivated, 32);
    assert_eq!((s.inactive, s.reclaimed), (32, 24), "{s:?}");
    assert_eq!(w.lru.stats.activated, 40);
    assert_eq!(w.check(), Ok(()));
    assert_eq!(w.check_lru(), Ok(()));
    // A contended try_lock keeps the page on the active list, unwalked.
    let before = w.lru.stats;
    let s = w.shrink_lru(|_| true);
    assert_eq!(s.reclaimed, 0);
    assert_eq!(
        w.lru.stats.contended - before.contended,
        u64::from(s.inactive + s.active)
    );
    let scanned = w.lru.stats.scanned as f64;
    let reclaimed = w.lru.stats.reclaimed as f64;
    assert!(
        scanned / reclaimed > 1.0,
        "scanned per reclaimed: {}",
        scanned / reclaimed
    );
    assert_eq!(w.check_lru(), Ok(()));
}

#[test]
fn per_vma_locks_fork_write_locks_every_vma_and_faults_report_the_kernels_outcomes() {
    use rmap_storm::rmap::vma_lock::{
        AbortReason, VmaLockOutcome, fork_vma_locks, lock_vma_under_rcu, vma_end_write_all,
        vma_start_write,
    };
    let mut w = world(RmapLayout::Chain);
    let a = w.spawn();
    w.mmap_anon_at(a, 0, 4);
    w.mmap_anon_at(a, 5, 4);
    w.mmap_file_at(a, 10, SpaceId(0), 0, 2);
    // A first fault cannot run under the vma lock: no anon_vma yet.
    let (o, _) = w.touch_per_vma(a, 0, true).unwrap();
    assert_eq!(o, VmaLockOutcome::Abort(AbortReason::NoAnonVma));
    let (o, _) = w.touch_per_vma(a, 1, true).unwrap();
    assert_eq!(o, VmaLockOutcome::Success);
    let (o, _) = w.touch_per_vma(a, 10, false).unwrap();
    assert_eq!(
        o,
        VmaLockOutcome::Abort(AbortReason::NotAnon),
        "6.4: anon vmas only"
    );
    // dup_mmap write-locks every vma of the parent, in address order.
    assert_eq!(
        fork_vma_locks(a, w.mm(a)),
        [0, 5, 10]
            .map(|s| LockReq::write(LockTarget::VmaLock(a, s)))
            .to_vec()
    );
    // While a vma is write-locked (mmap_lock WRITE held), faults abort;
    // mmap_write_unlock ends every write lock at once.
    let mut m = w.mm(a).clone();
    assert!(vma_start_write(&mut m, 0));
    assert!(!vma_start_write(&mut m, 0), "already locked this cycle");
    assert_eq!(lock_vma_under_rcu(a, &m, 1), Err(AbortReason::Locked));
    vma_end_write_all(&mut m);
    assert_eq!(
        lock_vma_under_rcu(a, &m, 1),
        Ok(LockReq::read(LockTarget::VmaLock(a, 0)))
    );
    // After a real fork the parent's vmas are unlocked again.
    let seq = w.mm(a).mm_lock_seq();
    w.fork(a);
    assert_eq!(w.mm(a).mm_lock_seq(), seq + 1);
    assert!(lock_vma_under_rcu(a, w.mm(a), 1).is_ok());
    // 6.4's do_swap_page returns VM_FAULT_RETRY under the vma lock.
    let p = page_at(&w, a, 1);
    w.reclaim(p);
    let (o, f) = w.touch_per_vma(a, 1, false).unwrap();
    assert_eq!(o, VmaLockOutcome::Retry);
    assert!(
        matches!(f, Fault::SwapIn { .. }),
        "then it runs under mmap_lock"
    );
    assert_eq!(w.check(), Ok(()));
}

#[test]
fn inspect_exec_prints_the_relro_splits_locks_in_order() {
    let run = |model: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
            .args(["inspect", model, "--exec", "--json"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    let out = run("models/execl.toml");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let commit: Vec<&str> = v["exec"]["relro_commit"]
        .as_array()
        .expect("exec.relro_commit")
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(commit.len(), 2, "{commit:?}");
    assert_eq!(commit[0], "i_mmap(file0) write");
    assert!(commit[1].starts_with("anon_vma_root(") && commit[1].ends_with(" write"));
    // A model without a file has no binary: one line, exit 2, no output.
    let out = run("models/aim7-fork-storm.toml");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("--exec") && err.contains("(allowed: world.files >= 1"));
    assert!(out.stdout.is_empty());
}
