//! Random sequences of fork, exit, exec, mmap (anon, shared and private
//! file), munmap, mprotect split and merge, faults (first touch, COW of anon
//! and private file pages, swap-in) and reclaim (to swap), run in lockstep on
//! two worlds, one per rmap layout (anon_vma_chain and the 2.6.2x list),
//! checking after every step that each world is exactly what a brute-force
//! recomputation says (`World::check`: each walk visits exactly the vmas
//! linked to the page's anon_vma or file over its index, finds exactly the
//! PTEs mapping it, every counter, tree, refcount and swap slot matches), and
//! that both layouts' walks find the same mappings for every page; at the
//! end, that once every task but the ancestor has exited, only the
//! ancestor's AVCs and anon_vmas remain and no swap slot is left but the
//! ancestor's own entries.

use proptest::prelude::*;
use rmap_storm::rmap::era::RmapLayout;
use rmap_storm::rmap::exec::Binary;
use rmap_storm::rmap::walk::{self, Locked};
use rmap_storm::rmap::{Backing, Capacity, Mapping, MmId, PageId, SpaceId, World, pte};
use std::collections::BTreeSet;
use std::ops::ControlFlow;

const VA_PAGES: u32 = 64;
const FILE_PAGES: u32 = 8;
/// Live tasks at most: keeps each brute-force check small.
const MAX_TASKS: usize = 10;

#[derive(Clone, Debug)]
enum Op {
    Fork(usize),
    Exit(usize),
    Touch {
        task: usize,
        vma: usize,
        off: u32,
        write: bool,
    },
    TouchAll {
        task: usize,
        write: bool,
    },
    Split {
        task: usize,
        vma: usize,
        off: u32,
    },
    Merge {
        task: usize,
        vma: usize,
    },
    Munmap {
        task: usize,
        vma: usize,
        off: u32,
        len: u32,
    },
    MmapAnon {
        task: usize,
        pages: u32,
    },
    MmapFile {
        task: usize,
        file: u32,
        pgoff: u32,
        pages: u32,
        private: bool,
    },
    Exec(u32),
    Reclaim(usize),
    Referenced(usize),
    /// One LRU pass; bit i of the mask: the i-th walk's try_lock is contended.
    Shrink(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let t = 0..MAX_TASKS;
    prop_oneof![
        4 => t.clone().prop_map(Op::Fork),
        2 => t.clone().prop_map(Op::Exit),
        6 => (t.clone(), 0..8usize, 0..16u32, any::<bool>())
            .prop_map(|(task, vma, off, write)| Op::Touch { task, vma, off, write }),
        2 => (t.clone(), any::<bool>()).prop_map(|(task, write)| Op::TouchAll { task, write }),
        3 => (t.clone(), 0..8usize, 1..16u32).prop_map(|(task, vma, off)| Op::Split { task, vma, off }),
        3 => (t.clone(), 0..8usize).prop_map(|(task, vma)| Op::Merge { task, vma }),
        2 => (t.clone(), 0..8usize, 0..16u32, 1..6u32)
            .prop_map(|(task, vma, off, len)| Op::Munmap { task, vma, off, len }),
        1 => (t.clone(), 1..8u32).prop_map(|(task, pages)| Op::MmapAnon { task, pages }),
        2 => (t.clone(), 0..2u32, 0..FILE_PAGES, 1..FILE_PAGES, any::<bool>())
            .prop_map(|(task, file, pgoff, pages, private)| Op::MmapFile { task, file, pgoff, pages, private }),
        1 => (0..2u32).prop_map(Op::Exec),
        3 => any::<usize>().prop_map(Op::Reclaim),
        1 => any::<usize>().prop_map(Op::Referenced),
        2 => any::<u64>().prop_map(Op::Shrink),
    ]
}

/// An ancestor with two anon vmas (one written), one file mapping (read).
fn start(layout: RmapLayout) -> (World, MmId) {
    let cap = Capacity {
        mms: 64,
        pages: 4096,
    };
    let mut w = World::new(VA_PAGES, &[FILE_PAGES, FILE_PAGES], cap);
    w.era.rmap = layout;
    let a = w.spawn();
    let first = w.mmap_anon(a, 6).unwrap();
    w.mmap_anon(a, 5).unwrap();
    w.mmap_file(a, SpaceId(0), 2, 4).unwrap();
    for addr in first..first + 6 {
        w.touch(a, addr, true).unwrap();
    }
    (w, a)
}

fn live(w: &World) -> Vec<MmId> {
    w.live_mms().map(|(id, _)| id).collect()
}

fn pick_page(w: &World, k: usize) -> Option<PageId> {
    let pages: Vec<PageId> = w.pages.iter_live().collect();
    (!pages.is_empty()).then(|| pages[k % pages.len()])
}

/// The vma `i` (mod count) of `mm`: (start, end).
fn pick_vma(w: &World, mm: MmId, i: usize) -> Option<(u32, u32)> {
    let vmas = w.mm(mm).vmas();
    (!vmas.is_empty()).then(|| {
        let v = &vmas[i % vmas.len()];
        (v.start, v.end)
    })
}

/// An op resolved against one world: concrete tasks, addresses and pages,
/// so both layouts run the same operation even where their vma sets differ
/// (the list layout can merge vmas the chain layout cannot).
#[derive(Clone, Debug)]
enum Step {
    Fork(MmId),
    Exit(MmId),
    Touch(MmId, Vec<u32>, bool),
    Split(MmId, u32),
    Merge(MmId, u32),
    Munmap(MmId, u32, u32),
    MmapAnon(MmId, u32),
    MmapFile(MmId, SpaceId, u32, u32, bool),
    Exec(SpaceId),
    Reclaim(PageId),
    Referenced(PageId),
    Shrink(u64),
}

fn resolve(w: &World, ancestor: MmId, op: &Op) -> Option<Step> {
    let tasks = live(w);
    let task = |i: usize| tasks[i % tasks.len()];
    Some(match *op {
        Op::Fork(i) if tasks.len() < MAX_TASKS => Step::Fork(task(i)),
        Op::Exit(i) if task(i) != ancestor => Step::Exit(task(i)),
        Op::Fork(_) | Op::Exit(_) => return None,
        Op::Touch {
            task: i,
            vma,
            off,
            write,
        } => {
            let (s, e) = pick_vma(w, task(i), vma)?;
            Step::Touch(task(i), vec![s + off % (e - s)], write)
        }
        Op::TouchAll { task: i, write } => {
            let addrs = w.mm(task(i)).vmas().iter().flat_map(|v| v.start..v.end);
            Step::Touch(task(i), addrs.collect(), write)
        }
        Op::Split { task: i, vma, off } => {
            let (s, e) = pick_vma(w, task(i), vma)?;
            Step::Split(task(i), s + off % (e - s))
        }
        Op::Merge { task: i, vma } => Step::Merge(task(i), pick_vma(w, task(i), vma)?.1),
        Op::Munmap {
            task: i,
            vma,
            off,
            len,
        } => {
            let (s, e) = pick_vma(w, task(i), vma)?;
            let a = s + off % (e - s);
            Step::Munmap(task(i), a, (a + len).min(e))
        }
        Op::MmapAnon { task: i, pages } => Step::MmapAnon(task(i), pages),
        Op::MmapFile {
            task: i,
            file,
            pgoff,
            pages,
            private,
        } => Step::MmapFile(
            task(i),
            SpaceId(file),
            pgoff,
            pages.min(FILE_PAGES - pgoff),
            private,
        ),
        Op::Exec(file) if tasks.len() < MAX_TASKS => Step::Exec(SpaceId(file)),
        Op::Exec(_) => return None,
        Op::Reclaim(k) => Step::Reclaim(pick_page(w, k)?),
        Op::Referenced(k) => Step::Referenced(pick_page(w, k)?),
        Op::Shrink(mask) => Step::Shrink(mask),
    })
}

fn run(w: &mut World, step: &Step) {
    match *step {
        Step::Fork(t) => {
            w.fork(t);
        }
        Step::Exit(t) => w.exit(t),
        Step::Touch(t, ref addrs, write) => {
            for &addr in addrs {
                if w.mm(t).vma(addr).is_some() {
                    w.touch(t, addr, write).unwrap();
                }
            }
        }
        Step::Split(t, at) => {
            let inside = w.mm(t).vma(at).is_some_and(|v| v.start < at);
            assert_eq!(w.split(t, at), inside);
        }
        Step::Merge(t, at) => {
            w.merge(t, at);
        }
        Step::Munmap(t, a, b) => w.munmap(t, a, b),
        Step::MmapAnon(t, pages) => {
            w.mmap_anon(t, pages);
        }
        Step::MmapFile(t, space, pgoff, pages, private) => {
            if private {
                w.mmap_file_private(t, space, pgoff, pages);
            } else {
                w.mmap_file(t, space, pgoff, pages);
            }
        }
        Step::Exec(space) => {
            let bin = Binary::in_file(space, FILE_PAGES).unwrap();
            w.exec(bin).unwrap();
        }
        Step::Reclaim(p) => {
            let r = w.reclaim(p);
            assert!(!r.raced && r.hits == r.mapped);
            assert!(r.vmas_visited >= r.mapped);
            assert_eq!(w.pages.mapping(p), None, "reclaimed and freed");
        }
        Step::Shrink(mask) => {
            let mut i = 0;
            let before = w.lru.stats;
            let done = w.shrink_lru(|_| {
                i += 1;
                mask >> (i % 64) & 1 == 1
            });
            let after = w.lru.stats;
            assert_eq!(
                after.reclaimed - before.reclaimed,
                u64::from(done.reclaimed)
            );
            assert_eq!(after.scanned - before.scanned, u64::from(done.inactive));
            assert!(done.reclaimed <= done.inactive);
            assert_eq!(w.lru.isolated(), 0, "every isolated page was put back");
        }
        Step::Referenced(p) => {
            let mapcount = w.pages.mapcount(p);
            let r = w.page_referenced(p);
            assert_eq!(r.mapped, mapcount, "page_referenced missed a mapping");
            assert_eq!(w.page_referenced(p).hits, 0, "young bits not cleared");
        }
    }
}

/// For every page, the (mm, addr) of the PTEs its walk finds mapping it.
fn mappings(w: &World) -> Vec<(PageId, BTreeSet<(MmId, u32)>)> {
    w.pages
        .iter_live()
        .map(|page| {
            let locked = match w.pages.mapping(page).unwrap() {
                Mapping::Anon { family, .. } => Locked::Family(family, w.family(family)),
                Mapping::File { space } => Locked::Space(space, &w.spaces[space.index()]),
            };
            let mut found = BTreeSet::new();
            walk::rmap_walk(locked, &w.pages, page, |v| {
                if pte::load(w.page_tables.pte(v.mm, v.addr).unwrap()).maps(page) {
                    found.insert((v.mm, v.addr));
                }
                ControlFlow::Continue(())
            });
            (page, found)
        })
        .collect()
}

/// Both worlds pass the brute-force check and find the same mappings.
fn check_both(chain: &World, list: &World) -> Result<(), String> {
    chain.check().map_err(|e| format!("chain: {e}"))?;
    list.check().map_err(|e| format!("list: {e}"))?;
    chain.check_lru().map_err(|e| format!("chain LRU: {e}"))?;
    list.check_lru().map_err(|e| format!("list LRU: {e}"))?;
    let (c, l) = (mappings(chain), mappings(list));
    if c != l {
        return Err(format!("layouts disagree: chain {c:?}, list {l:?}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn world_matches_brute_force_after_every_step(ops in proptest::collection::vec(op(), 1..40)) {
        let (mut w, ancestor) = start(RmapLayout::Chain);
        let (mut l, _) = start(RmapLayout::List);
        prop_assert_eq!(check_both(&w, &l), Ok(()));
        for op in &ops {
            let Some(step) = resolve(&w, ancestor, op) else { continue };
            run(&mut w, &step);
            run(&mut l, &step);
            if let Err(e) = check_both(&w, &l) {
                return Err(TestCaseError::fail(format!("after {step:?}: {e}")));
            }
        }
        for t in live(&w) {
            if t != ancestor {
                w.exit(t);
                l.exit(t);
            }
        }
        prop_assert_eq!(check_both(&w, &l), Ok(()));
        prop_assert_eq!(l.live_families().flat_map(|(_, f)| f.anon_vmas()).count(),
            l.live_families().count(), "the list layout has one anon_vma per family");
        // Only the ancestor's own links remain: each AVC is one of its vmas',
        // each anon_vma is one of its vmas' anon_vma.
        let own: Vec<_> = w.mm(ancestor).vmas().iter().filter_map(|v| v.anon).collect();
        for (fid, f) in w.live_families() {
            for (id, avc) in f.avcs() {
                prop_assert_eq!(avc.mm(), ancestor, "{:?} {:?} outlived its task", fid, id);
            }
            for (id, _) in f.anon_vmas() {
                prop_assert!(
                    own.iter().any(|l| l.family == fid && l.anon_vma == id),
                    "{:?} {:?} is no ancestor vma's anon_vma", fid, id
                );
            }
        }
        let chains: usize = own.iter().map(|l| l.chain_len as usize).sum();
        let avcs: usize = w.live_families().map(|(_, f)| f.avc_count()).sum();
        prop_assert_eq!(avcs, chains);
        prop_assert!(own.iter().all(|l| l.chain_len == 1));
        let file_vmas = w.mm(ancestor).vmas().iter()
            .filter(|v| matches!(v.backing, Backing::File { .. })).count();
        let entries: usize = w.spaces.iter().map(|s| s.entries().count()).sum();
        prop_assert_eq!(entries, file_vmas);
        // Swap slots left: only the ancestor's own entries hold any.
        let own_entries: BTreeSet<u32> = w.page_tables.table(ancestor).unwrap().iter()
            .filter_map(|p| pte::load(p).swap_slot()).collect();
        prop_assert_eq!(w.pages.swap.used() as usize, own_entries.len());
    }
}
