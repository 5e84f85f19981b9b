//! Random sequences of fork, exit, mmap, munmap, mprotect split and merge,
//! faults (first touch and COW) and reclaim, checking after every step that
//! the world is exactly what a brute-force recomputation says
//! (`World::check`: each walk visits exactly the vmas linked to the page's
//! anon_vma or file over its index, finds exactly the PTEs mapping it, and
//! every counter, tree and refcount matches), and at the end that once every
//! task but the ancestor has exited, only the ancestor's AVCs and anon_vmas
//! remain.

use proptest::prelude::*;
use rmap_storm::rmap::{Backing, Capacity, MmId, PageId, SpaceId, World};

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
    },
    Reclaim(usize),
    Referenced(usize),
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
        1 => (t.clone(), 0..2u32, 0..FILE_PAGES, 1..FILE_PAGES)
            .prop_map(|(task, file, pgoff, pages)| Op::MmapFile { task, file, pgoff, pages }),
        2 => any::<usize>().prop_map(Op::Reclaim),
        1 => any::<usize>().prop_map(Op::Referenced),
    ]
}

/// An ancestor with two anon vmas (one written), one file mapping (read).
fn start() -> (World, MmId) {
    let cap = Capacity {
        mms: 64,
        pages: 4096,
    };
    let mut w = World::new(VA_PAGES, &[FILE_PAGES, FILE_PAGES], cap);
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

fn apply(w: &mut World, ancestor: MmId, op: &Op) {
    let tasks = live(w);
    let task = |i: usize| tasks[i % tasks.len()];
    match *op {
        Op::Fork(i) if tasks.len() < MAX_TASKS => {
            w.fork(task(i));
        }
        Op::Fork(_) => {}
        Op::Exit(i) => {
            if task(i) != ancestor {
                w.exit(task(i));
            }
        }
        Op::Touch {
            task: i,
            vma,
            off,
            write,
        } => {
            if let Some((s, e)) = pick_vma(w, task(i), vma) {
                w.touch(task(i), s + off % (e - s), write).unwrap();
            }
        }
        Op::TouchAll { task: i, write } => {
            let vmas: Vec<(u32, u32)> = w
                .mm(task(i))
                .vmas()
                .iter()
                .map(|v| (v.start, v.end))
                .collect();
            for (s, e) in vmas {
                for addr in s..e {
                    w.touch(task(i), addr, write).unwrap();
                }
            }
        }
        Op::Split { task: i, vma, off } => {
            if let Some((s, e)) = pick_vma(w, task(i), vma) {
                let at = s + off % (e - s);
                assert_eq!(w.split(task(i), at), at > s);
            }
        }
        Op::Merge { task: i, vma } => {
            if let Some((_, e)) = pick_vma(w, task(i), vma) {
                w.merge(task(i), e);
            }
        }
        Op::Munmap {
            task: i,
            vma,
            off,
            len,
        } => {
            if let Some((s, e)) = pick_vma(w, task(i), vma) {
                let a = s + off % (e - s);
                w.munmap(task(i), a, (a + len).min(e));
            }
        }
        Op::MmapAnon { task: i, pages } => {
            w.mmap_anon(task(i), pages);
        }
        Op::MmapFile {
            task: i,
            file,
            pgoff,
            pages,
        } => {
            let pages = pages.min(FILE_PAGES - pgoff);
            w.mmap_file(task(i), SpaceId(file), pgoff, pages);
        }
        Op::Reclaim(k) => {
            if let Some(p) = pick_page(w, k) {
                let r = w.reclaim(p);
                assert!(!r.raced && r.hits == r.mapped);
                assert!(r.vmas_visited >= r.mapped);
            }
        }
        Op::Referenced(k) => {
            if let Some(p) = pick_page(w, k) {
                let mapcount = w.pages.mapcount(p);
                let r = w.page_referenced(p);
                assert_eq!(r.mapped, mapcount, "page_referenced missed a mapping");
                assert_eq!(w.page_referenced(p).hits, 0, "young bits not cleared");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn world_matches_brute_force_after_every_step(ops in proptest::collection::vec(op(), 1..40)) {
        let (mut w, ancestor) = start();
        prop_assert_eq!(w.check(), Ok(()));
        for op in &ops {
            apply(&mut w, ancestor, op);
            if let Err(e) = w.check() {
                return Err(TestCaseError::fail(format!("after {op:?}: {e}")));
            }
        }
        for t in live(&w) {
            if t != ancestor {
                w.exit(t);
            }
        }
        prop_assert_eq!(w.check(), Ok(()));
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
    }
}
