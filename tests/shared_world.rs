//! The shared world under concurrency: every operation at once on a small world
//! for every lock kind, with faults under mmap_lock and under per-VMA locks,
//! then `World::check` and `World::check_lru` on the reassembled world; a
//! try-lock walker giving up on a held root and a blocking one waiting for it;
//! read holds that overlap only for kinds that share; three races with
//! reclaim (a file fault, fork's PTE copy, a swap-in) hammered on a few
//! pages until they would break the world without their fix; the locks
//! exec's RELRO split declares and takes; and exec giving up when a stale
//! id has unmapped its segments.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rmap_storm::engine::storm::costs::Costs;
use rmap_storm::engine::storm::shared::{Isolated, SharedWorld, Touched, WalkOutcome};
use rmap_storm::locks::platform::Native;
use rmap_storm::locks::rwlock::RwlockT;
use rmap_storm::locks::{KindInfo, LockKind, LockVisitor, RawRwLock};
use rmap_storm::metrics::overlap::Hold;
use rmap_storm::model::{FaultLock, Shape, WorldSpec};
use rmap_storm::rmap::exec::Binary;
use rmap_storm::rmap::fault::Fault;
use rmap_storm::rmap::lru::{self, Verdict, Walked};
use rmap_storm::rmap::{Capacity, Mapping, MmId, PageId, SpaceId, World};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// 1 ancestor and 29 children, 2 anon vmas of 8 pages each at 0 and 9, one
/// 8-page file at 18 mapped by 10 tasks; room for file mappings up to 64.
fn spec() -> WorldSpec {
    WorldSpec {
        seed: 7,
        ancestors: 1,
        tasks: 30,
        shape: Shape::Flat,
        fan_out: 2,
        anon_vmas: 2,
        pages_per_vma: 8,
        cow: 0.25,
        va_pages: 64,
        files: 1,
        file_pages: 8,
        file_mappers: 10,
        rmap: Default::default(),
        file_unlink: Default::default(),
        find_vma_cache: Default::default(),
    }
}

/// Pages in the stress world's pool: the built world holds 140 (16 of the
/// ancestor, 4 COW copies per child, 8 file pages); children's COW faults
/// could take 464 more.
const STRESS_PAGES: u32 = 150;
/// kswapd reclaims below this many free pages, a little late, so faults run
/// out now and then and the faulting threads reclaim directly.
const KSWAPD_LOW: u64 = 3;
/// Pages kswapd isolates per batch: few, so it lags behind the faults.
const KSWAPD_BATCH: usize = 4;
/// fork-exit runs once per this many of its turns.
const CHURN: u32 = 16;

fn shared<L: RawRwLock>(cap: Capacity, mmap_lock: LockKind, faults: FaultLock) -> SharedWorld<L> {
    let world = World::build_with(&spec(), cap);
    SharedWorld::new(world, mmap_lock, Costs::default(), 1).with_fault_lock(faults)
}

/// Every operation kind the stress test must see succeed at least once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Fork,
    ForkNone,
    Exit,
    TouchHit,
    TouchFault,
    TouchSegv,
    OutOfPages,
    SwapIn,
    SwapCacheHit,
    Split,
    Merge,
    MmapFile,
    Munmap,
    MunmapDowngrade,
    RemapMprotect,
    Exec,
    ReadMaps,
    ReadMapsCritical,
    Referenced,
    ReferencedTry,
    Contended,
    Isolate,
    LruReclaimed,
    VmaLockSuccess,
    VmaLockFallback,
}

const OPS: [Op; 25] = [
    Op::Fork,
    Op::ForkNone,
    Op::Exit,
    Op::TouchHit,
    Op::TouchFault,
    Op::TouchSegv,
    Op::OutOfPages,
    Op::SwapIn,
    Op::SwapCacheHit,
    Op::Split,
    Op::Merge,
    Op::MmapFile,
    Op::Munmap,
    Op::MunmapDowngrade,
    Op::RemapMprotect,
    Op::Exec,
    Op::ReadMaps,
    Op::ReadMapsCritical,
    Op::Referenced,
    Op::ReferencedTry,
    Op::Contended,
    Op::Isolate,
    Op::LruReclaimed,
    Op::VmaLockSuccess,
    Op::VmaLockFallback,
];

/// Operations only faults under per-VMA locks do.
const PER_VMA_OPS: [Op; 2] = [Op::VmaLockSuccess, Op::VmaLockFallback];

struct Counts([AtomicU64; OPS.len()]);

impl Counts {
    fn bump(&self, op: Op) {
        self.0[op as usize].fetch_add(1, Ordering::Relaxed);
    }
    /// Operations not seen yet, of those `faults` makes.
    fn missing(&self, faults: FaultLock) -> Vec<Op> {
        OPS.into_iter()
            .filter(|op| faults == FaultLock::PerVma || !PER_VMA_OPS.contains(op))
            .filter(|&op| self.0[op as usize].load(Ordering::Relaxed) == 0)
            .collect()
    }

    /// [`missing`](Self::missing) but for the outcomes only a race gives.
    fn missing_chosen(&self, faults: FaultLock) -> Vec<Op> {
        let mut m = self.missing(faults);
        m.retain(|op| !RACY.contains(op));
        m
    }
}

/// One stress thread's loop body, by role.
struct Stress<'a, L: RawRwLock> {
    world: &'a SharedWorld<L>,
    counts: &'a Counts,
    rng: Xoshiro256PlusPlus,
}

impl<L: RawRwLock> Stress<'_, L> {
    fn any_mm(&mut self) -> MmId {
        let live = self.world.live_mms();
        live[self.rng.random_range(0..live.len())]
    }

    fn any_page(&mut self) -> PageId {
        PageId(self.rng.random_range(0..self.world.page_capacity()))
    }

    /// Exit a random task other than the ancestor.
    fn exit_one(&mut self) {
        let mm = self.any_mm();
        if mm != self.world.ancestor() {
            self.world.exit(mm);
            self.counts.bump(Op::Exit);
        }
    }

    /// Replace a task, one time in [`CHURN`]: children must live long enough
    /// to COW pages, or exits free pages faster than faults take them and the
    /// pool never runs short.
    fn fork_exit(&mut self, from_ancestor: bool) {
        if !self.rng.random_ratio(1, CHURN) {
            return;
        }
        let parent = if from_ancestor {
            self.world.ancestor()
        } else {
            self.any_mm()
        };
        match self.world.fork(parent) {
            Some(_) => self.counts.bump(Op::Fork),
            None => self.counts.bump(Op::ForkNone),
        }
        self.exit_one();
    }

    fn touch(&mut self) {
        let mm = self.any_mm();
        // Mostly inside the built layout (anon vmas and file, pages 0..27),
        // sometimes anywhere (mostly no vma there).
        let end = if self.rng.random_bool(0.9) {
            27
        } else {
            self.world.va_pages()
        };
        let addr = self.rng.random_range(0..end);
        let write = self.rng.random_bool(0.5);
        match self.world.touch(mm, addr, write, None) {
            Ok(Some(t)) => self.count_touch(&t),
            Ok(None) => self.counts.bump(Op::TouchSegv),
            Err(_) => {
                self.counts.bump(Op::OutOfPages);
                self.shrink(lru::SWAP_CLUSTER_MAX, true);
            }
        }
    }

    fn count_touch(&self, t: &Touched) {
        self.counts.bump(match t.fault {
            Fault::Hit => Op::TouchHit,
            Fault::SwapIn {
                cache_hit: false, ..
            } => Op::SwapIn,
            Fault::SwapIn {
                cache_hit: true, ..
            } => Op::SwapCacheHit,
            _ => Op::TouchFault,
        });
        if t.vma_lock.success > 0 {
            self.counts.bump(Op::VmaLockSuccess);
        }
        if t.vma_lock.abort + t.vma_lock.retry > 0 {
            self.counts.bump(Op::VmaLockFallback);
        }
    }

    /// One LRU batch of up to `nr` pages, as the reclaim role walks it:
    /// isolate (a direct reclaimer may be told to throttle), page_referenced
    /// each page, reclaim the old inactive ones, put the batch back.
    fn shrink(&mut self, nr: usize, direct: bool) {
        let Isolated::Batch(mut batch) = self.world.isolate(nr, direct).0 else {
            return;
        };
        self.counts.bump(Op::Isolate);
        while let Some(page) = batch.next_page() {
            let try_lock = self.rng.random_bool(0.5);
            let walked = match self.world.page_referenced(page, try_lock, &mut || {}) {
                WalkOutcome::Done { result, .. } if result.hits > 0 => Walked::Referenced,
                WalkOutcome::Contended => Walked::Contended,
                _ => Walked::Old,
            };
            let world = self.world;
            let verdict = lru::verdict(batch.from, walked, || {
                world.reclaim(page, &mut || {});
                world.only_isolated(page)
            });
            if verdict == Verdict::Reclaimed {
                self.counts.bump(Op::LruReclaimed);
            }
            batch.decide(page, verdict);
        }
        self.world.putback(batch);
    }

    fn mprotect(&mut self) {
        let mm = self.any_mm();
        if self.rng.random_ratio(1, CHURN) {
            // Seed 000's loop on the first anon vma: mmap(MAP_FIXED), then
            // mprotect of the whole of it (as rarely as fork-exit: it frees
            // the vma's pages).
            if self.world.mmap_anon_fixed(mm, 0, 8) && self.world.mprotect(mm, 0, 8) {
                self.counts.bump(Op::RemapMprotect);
            }
            return;
        }
        let at = self.rng.random_range(0..27);
        if self.world.split(mm, at) {
            self.counts.bump(Op::Split);
            if self.world.merge(mm, at) {
                self.counts.bump(Op::Merge);
            }
        }
    }

    fn execl(&mut self) {
        let mm = self.any_mm();
        let pgoff = self.rng.random_range(0..8);
        let pages = self.rng.random_range(1..=8 - pgoff);
        if let Some(start) = self.world.mmap_file(mm, SpaceId(0), pgoff, pages) {
            self.counts.bump(Op::MmapFile);
            for addr in start..start + pages {
                let _ = self.world.touch(mm, addr, false, None);
            }
            let downgrade = self.rng.random_bool(0.5);
            self.world.munmap(mm, start, start + pages, downgrade);
            self.counts.bump(if downgrade {
                Op::MunmapDowngrade
            } else {
                Op::Munmap
            });
        }
    }

    /// unixbench execl: a new task execs the 8-page file as a binary,
    /// then exits.
    fn exec(&mut self) {
        let bin = Binary::in_file(SpaceId(0), 8).expect("8 pages hold a binary");
        let mut faults = Vec::new();
        if let Ok(Some(e)) = self.world.exec(bin, &mut |t| faults.push(*t)) {
            self.world.exit(e.mm);
            self.counts.bump(Op::Exec);
        }
        for t in &faults {
            self.count_touch(t);
        }
    }

    fn monitor(&mut self) {
        let mm = self.any_mm();
        let critical = self.rng.random_bool(0.5);
        self.world.read_maps(mm, critical, &|| {});
        self.counts.bump(if critical {
            Op::ReadMapsCritical
        } else {
            Op::ReadMaps
        });
    }

    fn walk(&mut self, try_lock: bool) {
        let page = self.any_page();
        match self.world.page_referenced(page, try_lock, &mut || {}) {
            WalkOutcome::Done { .. } if try_lock => self.counts.bump(Op::ReferencedTry),
            WalkOutcome::Done { .. } => self.counts.bump(Op::Referenced),
            WalkOutcome::Contended => self.counts.bump(Op::Contended),
            WalkOutcome::Free => {}
            WalkOutcome::PageLocked => panic!("page_referenced takes no page lock"),
        }
    }

    /// kswapd: shrink a small batch while free pages are below a low
    /// watermark, so faults still run out now and then.
    fn kswapd(&mut self) {
        if self.world.free_pages() < KSWAPD_LOW {
            self.shrink(KSWAPD_BATCH, false);
        }
    }
}

/// Run every role on every thread until each operation kind has been seen
/// and at least `MIN_RUN` has passed, then check the reassembled world.
struct StressRun {
    mmap_lock: LockKind,
    faults: FaultLock,
}

const MIN_RUN: Duration = Duration::from_millis(100);
/// Outcomes that need two threads to meet at the right moment (a try_lock
/// walk beside a writer, a fault finding the pool empty, a swap-in finding
/// another's page cached): how often one run sees them depends on the
/// machine's load, so the test asks each of them of the whole test (every
/// kind and fault lock), and one run waits at most `RACY_WAIT` for them.
const RACY: [Op; 3] = [Op::Contended, Op::OutOfPages, Op::SwapCacheHit];
const RACY_WAIT: Duration = Duration::from_secs(2);
/// Threads, each running a random role per iteration: twice the 2 cores, so
/// holders get preempted, but few enough that the spinning kinds (whose
/// waiters burn their slices) still get through every operation quickly.
const THREADS: u64 = 4;
/// A run that has not seen every operation by then has failed.
const MAX_RUN: Duration = Duration::from_secs(20);

impl LockVisitor for StressRun {
    /// The racy outcomes this run saw.
    type Output = Vec<Op>;
    fn visit<L: RawRwLock + KindInfo>(self) -> Vec<Op> {
        let world: SharedWorld<L> = shared(
            Capacity {
                mms: 32,
                pages: STRESS_PAGES,
            },
            self.mmap_lock,
            self.faults,
        );
        let counts = Counts(std::array::from_fn(|_| AtomicU64::new(0)));
        let stop = AtomicBool::new(false);
        let roles: [fn(&mut Stress<'_, L>); 11] = [
            |s| s.fork_exit(true),
            |s| s.fork_exit(false),
            |s| s.touch(),
            |s| s.touch(),
            |s| s.mprotect(),
            |s| s.execl(),
            |s| s.exec(),
            |s| s.monitor(),
            |s| s.walk(false),
            |s| s.walk(true),
            |s| s.kswapd(),
        ];
        let start = Instant::now();
        thread::scope(|scope| {
            for i in 0..THREADS {
                let (world, counts, stop) = (&world, &counts, &stop);
                scope.spawn(move || {
                    let rng = Xoshiro256PlusPlus::seed_from_u64(i);
                    let mut s = Stress { world, counts, rng };
                    while !stop.load(Ordering::Relaxed) {
                        let role = roles[s.rng.random_range(0..roles.len())];
                        role(&mut s);
                    }
                });
            }
            let waiting = |t: Duration| {
                t < MIN_RUN
                    || (!counts.missing_chosen(self.faults).is_empty() && t < MAX_RUN)
                    || (!counts.missing(self.faults).is_empty() && t < RACY_WAIT)
            };
            while waiting(start.elapsed()) {
                thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Ordering::Relaxed);
        });
        let (kind, faults) = (L::KIND, self.faults);
        let missing = counts.missing_chosen(faults);
        let seen: Vec<(Op, u64)> = OPS
            .iter()
            .map(|&op| (op, counts.0[op as usize].load(Ordering::Relaxed)))
            .collect();
        assert!(
            missing.is_empty(),
            "{kind}, {faults:?}: never ran {missing:?}; ran {seen:?}"
        );
        let world = world.into_world();
        if let Err(e) = world.check().and_then(|()| world.check_lru()) {
            panic!("{kind}, {faults:?}: world broken after the run: {e}");
        }
        RACY.into_iter()
            .filter(|&op| counts.0[op as usize].load(Ordering::Relaxed) > 0)
            .collect()
    }
}

#[test]
fn every_operation_at_once_leaves_a_consistent_world() {
    let mut racy_seen = Vec::new();
    for kind in LockKind::ALL {
        for faults in [FaultLock::MmapLock, FaultLock::PerVma] {
            racy_seen.extend(kind.dispatch::<Native, _>(StressRun {
                mmap_lock: kind,
                faults,
            }));
        }
    }
    let never: Vec<Op> = RACY
        .into_iter()
        .filter(|op| !racy_seen.contains(op))
        .collect();
    assert!(never.is_empty(), "no run of any kind saw {never:?}");
}

/// A small world for the walk tests: an ancestor with one 4-page anon vma
/// and a 4-page file, and two children.
fn small<L: RawRwLock>() -> SharedWorld<L> {
    let spec = WorldSpec {
        tasks: 3,
        anon_vmas: 1,
        pages_per_vma: 4,
        cow: 0.0,
        va_pages: 16,
        file_pages: 4,
        file_mappers: 3,
        rmap: Default::default(),
        file_unlink: Default::default(),
        find_vma_cache: Default::default(),
        ..spec()
    };
    SharedWorld::new(World::build(&spec), LockKind::Rwsem, Costs::default(), 1)
}

/// The first live page that is anon (or file) and mapped.
fn mapped_page<L: RawRwLock>(world: &SharedWorld<L>, anon: bool) -> PageId {
    let pages = world.pages();
    pages
        .iter_live()
        .find(|&p| {
            let is_anon = matches!(pages.mapping(p), Some(Mapping::Anon { .. }));
            is_anon == anon && pages.mapcount(p) > 0
        })
        .expect("the small world maps anon and file pages")
}

fn done_hold(out: WalkOutcome) -> Hold {
    match out {
        WalkOutcome::Done { result, hold, .. } => {
            assert!(!result.raced && result.vmas_visited > 0, "{result:?}");
            hold
        }
        other => panic!("expected a walk, got {other:?}"),
    }
}

/// While a writer holds the page's rmap lock, a try_lock walk gives up and a
/// blocking one enters only after the writer has left.
struct TryLockGivesUp;

impl LockVisitor for TryLockGivesUp {
    type Output = ();
    fn visit<L: RawRwLock + KindInfo>(self) {
        let world = small::<L>();
        let epoch = Instant::now();
        for anon in [true, false] {
            let page = mapped_page(&world, anon);
            let (entered_tx, entered) = mpsc::channel();
            let (release, release_rx) = mpsc::channel::<()>();
            let released_at = AtomicU64::new(u64::MAX);
            thread::scope(|s| {
                // Owned by this closure: a failed assertion below drops it,
                // which frees the writer instead of leaving the scope waiting.
                let release = release;
                let (world, released_at) = (&world, &released_at);
                s.spawn(move || {
                    assert!(world.hold_rmap_write(page, &|| {
                        entered_tx.send(()).unwrap();
                        release_rx.recv().unwrap();
                        let now = epoch.elapsed().as_nanos() as u64;
                        released_at.store(now, Ordering::SeqCst);
                    }));
                });
                entered.recv().unwrap();
                let kind = L::KIND;
                // On a thread of its own, so a try walk that wrongly waits
                // fails the test instead of hanging it.
                let tried = s.spawn(move || world.page_referenced(page, true, &mut || {}));
                let deadline = Instant::now() + Duration::from_secs(10);
                while !tried.is_finished() {
                    assert!(Instant::now() < deadline, "{kind}: try_lock walk waited");
                    thread::sleep(Duration::from_millis(1));
                }
                assert_eq!(
                    tried.join().unwrap(),
                    WalkOutcome::Contended,
                    "{kind}: try_lock walk while the rmap lock is write-held"
                );
                let blocked = s.spawn(move || world.page_referenced(page, false, &mut || {}));
                thread::sleep(Duration::from_millis(30));
                assert!(!blocked.is_finished(), "{kind}: walked past a writer");
                release.send(()).unwrap();
                let hold = done_hold(blocked.join().unwrap());
                // The world's epoch was taken before `epoch`, so its stamps
                // are at least as large for the same instant.
                let released = released_at.load(Ordering::SeqCst);
                assert!(
                    hold.enter_ns >= released,
                    "{kind}: entered at {} before the writer left at {released}",
                    hold.enter_ns
                );
            });
        }
    }
}

#[test]
fn try_lock_walk_gives_up_on_a_writer_and_a_blocking_one_waits() {
    for kind in LockKind::ALL {
        kind.dispatch::<Native, _>(TryLockGivesUp);
    }
}

/// Two walkers of one page start together: for a kind that shares, both
/// are inside at once (each waits inside for the other); for an
/// exclusive-only kind their holds are disjoint even though each stays
/// inside for a while.
struct HoldsOverlapOnlyWhenShared;

impl LockVisitor for HoldsOverlapOnlyWhenShared {
    type Output = ();
    fn visit<L: RawRwLock + KindInfo>(self) {
        let world = small::<L>();
        let page = mapped_page(&world, true);
        let start = Barrier::new(2);
        let inside = Barrier::new(2);
        let walk = || {
            let mut first = true;
            start.wait();
            world.page_referenced(page, false, &mut || {
                if std::mem::take(&mut first) {
                    if L::SHARED_READERS {
                        inside.wait();
                    } else {
                        thread::sleep(Duration::from_millis(20));
                    }
                }
            })
        };
        let (a, b) = thread::scope(|s| {
            let a = s.spawn(walk);
            let b = s.spawn(walk);
            (a.join().unwrap(), b.join().unwrap())
        });
        let (a, b) = (done_hold(a), done_hold(b));
        let overlap = a.enter_ns.max(b.enter_ns) < a.leave_ns.min(b.leave_ns);
        assert_eq!(
            overlap,
            L::SHARED_READERS,
            "{}: holds {a:?} and {b:?}",
            L::KIND
        );
    }
}

#[test]
fn read_holds_overlap_only_for_kinds_that_share() {
    for kind in LockKind::ALL {
        kind.dispatch::<Native, _>(HoldsOverlapOnlyWhenShared);
    }
}

/// Reclaim every page of the pool, over and over, on one thread while
/// `work` runs on every mm of the world on others, for `run`; then check the
/// world. Returns how many reclaims walked a page.
fn race_reclaim(
    world: SharedWorld<RwlockT>,
    run: Duration,
    work: impl Fn(&SharedWorld<RwlockT>, MmId) + Sync,
) -> u64 {
    let stop = AtomicBool::new(false);
    let reclaims = AtomicU64::new(0);
    thread::scope(|s| {
        for mm in world.live_mms() {
            let (world, stop, work) = (&world, &stop, &work);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    work(world, mm);
                }
            });
        }
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                for page in 0..world.page_capacity() {
                    if let WalkOutcome::Done { .. } = world.reclaim(PageId(page), &mut || {}) {
                        reclaims.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
        thread::sleep(run);
        stop.store(true, Ordering::Relaxed);
    });
    world.into_world().check().unwrap();
    reclaims.into_inner()
}

/// A file page faulted in and reclaimed over and over: the fault finds the
/// page in the page cache while reclaim drops it from there and frees it.
/// Without the page lock the fault maps a freed page (8 runs out of 8 caught
/// it within these 300 ms on 2 cores, in a debug build: PagePool::map's
/// assertion); with it, never.
#[test]
fn a_file_fault_never_maps_a_page_reclaim_freed() {
    let spec = WorldSpec {
        tasks: 1,
        anon_vmas: 0,
        va_pages: 4,
        file_pages: 1,
        file_mappers: 1,
        rmap: Default::default(),
        file_unlink: Default::default(),
        find_vma_cache: Default::default(),
        ..spec()
    };
    // Two pages: one cached, one for the fault to allocate while the other
    // is being freed.
    let cap = Capacity { mms: 1, pages: 2 };
    let world = SharedWorld::new(
        World::build_with(&spec, cap),
        LockKind::Rwsem,
        Costs::default(),
        1,
    );
    let faults = AtomicU64::new(0);
    let reclaims = race_reclaim(world, Duration::from_millis(300), |world, mm| {
        if let Ok(Some(Touched {
            fault: Fault::File { .. },
            ..
        })) = world.touch(mm, 0, false, None)
        {
            faults.fetch_add(1, Ordering::Relaxed);
        }
    });
    let faults = faults.into_inner();
    assert!(
        faults > 0 && reclaims > 0,
        "{faults} faults, {reclaims} reclaims"
    );
}

/// Two tasks fork and exit children over and over, refaulting the pages
/// reclaim takes away: copy_pte_range reads a parent PTE that reclaim then
/// clears, freeing the page before the child's reference is taken. Without
/// PagePool::try_map the child maps a freed page (7 runs out of 10 caught it
/// within this second on 2 cores, in a debug build); with it, never.
#[test]
fn fork_never_maps_a_page_reclaim_freed() {
    let spec = WorldSpec {
        ancestors: 2,
        tasks: 2,
        anon_vmas: 1,
        pages_per_vma: 4,
        va_pages: 8,
        files: 0,
        file_pages: 0,
        file_mappers: 0,
        rmap: Default::default(),
        file_unlink: Default::default(),
        find_vma_cache: Default::default(),
        ..spec()
    };
    let cap = Capacity { mms: 4, pages: 16 };
    let world = SharedWorld::new(
        World::build_with(&spec, cap),
        LockKind::Rwsem,
        Costs::default(),
        1,
    );
    let forks = AtomicU64::new(0);
    let reclaims = race_reclaim(world, Duration::from_secs(1), |world, mm| {
        for addr in 0..4 {
            let _ = world.touch(mm, addr, false, None);
        }
        if let Some(child) = world.fork(mm) {
            forks.fetch_add(1, Ordering::Relaxed);
            world.exit(child);
        }
    });
    let forks = forks.into_inner();
    assert!(
        forks > 0 && reclaims > 0,
        "{forks} forks, {reclaims} reclaims"
    );
}

/// exec's new task is unlisted, but a caller that kept the id of a task
/// since exited reaches the reused slot (the stress test's picks do). One
/// that unmaps every unlisted slot at exec's first fault takes the RW vma
/// away before the RELRO mprotect: exec gives up and exits the task, and
/// the world stays consistent.
#[test]
fn exec_gives_up_when_a_stale_id_unmaps_its_segments() {
    let spec = WorldSpec {
        tasks: 3,
        anon_vmas: 1,
        pages_per_vma: 4,
        va_pages: 32,
        file_pages: 8,
        file_mappers: 1,
        ..spec()
    };
    let cap = Capacity { mms: 4, pages: 64 };
    let world: SharedWorld<RwlockT<Native>> = SharedWorld::new(
        World::build_with(&spec, cap),
        LockKind::Rwlock,
        Costs::default(),
        1,
    );
    let bin = Binary::in_file(SpaceId(0), 8).expect("8 pages hold a binary");
    let live = world.live_mms();
    let stale = (0..cap.mms).map(MmId).find(|id| !live.contains(id));
    let stale = stale.expect("one slot is free");
    let mut faults = 0;
    let done = world.exec(bin, &mut |_| {
        faults += 1;
        world.munmap(stale, 0, spec.va_pages, false);
    });
    assert_eq!(done, Ok(None), "exec after its segments were unmapped");
    assert!(faults > 0, "exec faulted nothing");
    assert_eq!(world.live_mms(), live, "exec listed or exited a task");
    let world = world.into_world();
    world.check().expect("consistent after the stale unmap");
}
