//! Behaviour claims of the lock kinds, checked on the simulator, where an
//! interleaving is exact and repeatable: who wins a release, who spins and
//! who sleeps, how many readers one wake takes, what a percpu-rwsem writer
//! waits for. Each test names the claim it checks and fails on a lock that
//! lacks the behaviour. Bodies only record what happened; every assertion
//! runs after the simulation has ended, so a failed claim is a message,
//! never a hang.
#![cfg(not(shuttle))]

use rmap_storm::engine::sim::kernel::Kernel;
use rmap_storm::engine::sim::run::{self, Body, Ended, Timers};
use rmap_storm::engine::sim::{Preempt, Sim, SimSpec};
use rmap_storm::locks::percpu_rwsem::PercpuRwsem;
use rmap_storm::locks::platform::Platform;
use rmap_storm::locks::rwsem::Rwsem;
use rmap_storm::locks::rwsem_fifo::RwsemFifo;
use rmap_storm::locks::rwsem_xadd::RwsemXadd;
use rmap_storm::locks::spinlock::TicketSpinlock;
use rmap_storm::locks::stats::{Event, LockClass, LockStats, ThreadStats};
use rmap_storm::locks::tas::TasSpinlock;
use rmap_storm::locks::{KindInfo, LockKind, LockVisitor, RawRwLock, RwLock};
use rmap_storm::model::machine::{self, MachineProfile};
use rmap_storm::torture::check::{Occupancy, Seen};
use rmap_storm::torture::{self, Config, Engine};
use std::cell::{Cell, RefCell};

fn profile() -> MachineProfile {
    machine::load(&MachineProfile::default_path()).expect("the default machine profile")
}

/// The watchdog of every scene: one virtual second.
const CUT_OFF_PS: u64 = 1_000_000_000_000;

/// Run `bodies` as threads of a `cpus`-CPU machine (thread i starts on CPU
/// i mod cpus); returns how it ended and each thread's lock figures. A
/// thread left unfinished (a lost wake-up, a livelock) fails the test here,
/// with the scene's name.
fn scene(name: &str, cpus: usize, bodies: Vec<Body<'_>>) -> (Ended, Vec<LockStats>) {
    let n = bodies.len();
    let kernel = Kernel::new(&profile(), cpus, Preempt::Voluntary, n, None, 7);
    let mut stats: Vec<ThreadStats> = (0..n).map(|_| ThreadStats::default()).collect();
    let timers = Timers {
        window_ps: 0,
        on_window: Box::new(|_, _| {}),
        stop_ps: CUT_OFF_PS,
        on_stop: Box::new(|| {}),
        cut_off_ps: CUT_OFF_PS,
    };
    let ended = run::run(kernel, bodies, &mut stats, timers);
    assert!(
        !ended.cut_off && ended.unfinished == 0,
        "{name}: {} of {n} threads unfinished (cut off: {})",
        ended.unfinished,
        ended.cut_off
    );
    let stats = stats.iter_mut().map(ThreadStats::take).collect();
    (ended, stats)
}

/// One thread's count of `ev` (a lone lock counts as the anon_vma class).
fn get(stats: &LockStats, ev: Event) -> u64 {
    stats.class(LockClass::AnonVma).get(ev)
}

// ---------------------------------------------------------------- tas

/// H holds, A starts waiting, H releases and at once asks again: who is
/// next? Returns the order of the three acquisitions.
fn release_then_retake<L: RawRwLock<Platform = Sim> + KindInfo>() -> Vec<&'static str> {
    let lock = RwLock::<L, ()>::new(());
    let order = RefCell::new(Vec::new());
    let (lock, order) = (&lock, &order);
    let bodies: Vec<Body<'_>> = vec![
        Box::new(move || {
            let g = lock.write();
            order.borrow_mut().push("H1");
            Sim::udelay(2_000);
            drop(g);
            let g = lock.write();
            order.borrow_mut().push("H2");
            drop(g);
        }),
        Box::new(move || {
            Sim::udelay(500);
            let g = lock.write();
            order.borrow_mut().push("A");
            drop(g);
        }),
    ];
    scene(L::KIND.name(), 2, bodies);
    order.take()
}

/// Claim: tas grants out of arrival order under contention: the releaser,
/// asking again after A has waited 1.5 us, wins (its line is still its
/// own). Fails on a FIFO lock, as the ticket lock's control shows.
#[test]
fn tas_a_later_arrival_wins_the_release() {
    assert_eq!(release_then_retake::<TasSpinlock<Sim>>(), ["H1", "H2", "A"]);
}

/// The control: the ticket lock serves A, who took its ticket first.
#[test]
fn ticket_lock_serves_the_earlier_arrival() {
    assert_eq!(
        release_then_retake::<TicketSpinlock<Sim>>(),
        ["H1", "A", "H2"]
    );
}

/// Four CPUs hammer a lock of kind `L`, two writing and two reading (or,
/// for exclusive-only kinds, reading exclusively); every holder checks who
/// else is inside. Returns the overlaps seen.
fn overlaps_under_hammering<L: RawRwLock + KindInfo>() -> u64 {
    let lock = RwLock::<L, ()>::new(());
    let occ = Occupancy::default();
    let overlaps = Cell::new(0u64);
    let (lock, occ, overlaps) = (&lock, &occ, &overlaps);
    let saw = move |seen: Seen| {
        if seen == Seen::Violation {
            overlaps.set(overlaps.get() + 1);
        }
    };
    let bodies: Vec<Body<'_>> = (0..4)
        .map(|t| {
            Box::new(move || {
                for i in 0..300u64 {
                    if t < 2 {
                        let g = lock.write();
                        let seen = occ.enter_write();
                        Sim::udelay(100 + 37 * (i % 3));
                        saw(seen.and(occ.exit_write()));
                        drop(g);
                    } else {
                        let g = lock.read();
                        let seen = occ.enter_read(L::SHARED_READERS);
                        Sim::udelay(100 + 53 * (i % 2));
                        saw(seen.and(occ.exit_read(L::SHARED_READERS)));
                        drop(g);
                    }
                    Sim::user_work(30 + 11 * (i % 5));
                }
            }) as Body<'_>
        })
        .collect();
    scene(L::KIND.name(), 4, bodies);
    overlaps.get()
}

/// [`overlaps_under_hammering`] for whichever kind `dispatch` selects.
struct HammerSim;

impl LockVisitor for HammerSim {
    type Output = u64;
    fn visit<L: RawRwLock + KindInfo>(self) -> u64 {
        overlaps_under_hammering::<L>()
    }
}

/// Claim: tas never has two holders (and neither has any other kind) on
/// the simulator, where an access takes a line transfer's time and a
/// window of a few accesses is wide enough to hit.
#[test]
fn no_kind_ever_has_a_writer_beside_another_holder() {
    let mut report = String::new();
    for kind in LockKind::ALL {
        let n = kind.dispatch::<Sim, _>(HammerSim);
        if n > 0 {
            report += &format!("{kind}: {n} overlaps\n");
        }
    }
    assert!(report.is_empty(), "{report}");
}

// ---------------------------------------------------------------- writer spinning

/// O takes the lock (`owner_reads`: for read) and holds it 5 us; W asks to
/// write 1 us in. Returns W's figures.
fn writer_behind<L: RawRwLock<Platform = Sim> + KindInfo>(owner_reads: bool) -> LockStats {
    let lock = RwLock::<L, ()>::new(());
    let lock = &lock;
    let bodies: Vec<Body<'_>> = vec![
        Box::new(move || {
            if owner_reads {
                let g = lock.read();
                Sim::udelay(5_000);
                drop(g);
            } else {
                let g = lock.write();
                Sim::udelay(5_000);
                drop(g);
            }
        }),
        Box::new(move || {
            Sim::udelay(1_000);
            drop(lock.write());
        }),
    ];
    let (_, stats) = scene(L::KIND.name(), 2, bodies);
    stats.into_iter().nth(1).expect("two threads")
}

/// Claim: rwsem-xadd spins on a writer owner (and so never sleeps behind a
/// 5 us hold) and does not spin on reader owners (it sleeps at once).
/// Fails on an rwsem-xadd that spins on readers (or never spins).
#[test]
fn rwsem_xadd_spins_on_a_writer_owner_and_not_on_reader_owners() {
    let w = writer_behind::<RwsemXadd<Sim>>(false);
    let (spins, sleeps) = (get(&w, Event::Spin), get(&w, Event::Sleep));
    assert!(
        spins > 0 && sleeps == 0,
        "behind a writer: {spins} spins, {sleeps} sleeps"
    );
    let r = writer_behind::<RwsemXadd<Sim>>(true);
    let (spins, sleeps) = (get(&r, Event::Spin), get(&r, Event::Sleep));
    assert!(
        spins == 0 && sleeps == 1,
        "behind a reader: {spins} spins, {sleeps} sleeps"
    );
}

/// The contrast: today's rwsem spins on one reader for up to 10.5 us, so a
/// writer behind a 5 us read hold gets the lock without sleeping.
#[test]
fn rwsem_spins_on_a_reader_owner_within_its_threshold() {
    let r = writer_behind::<Rwsem<Sim>>(true);
    let (spins, sleeps) = (get(&r, Event::Spin), get(&r, Event::Sleep));
    assert!(
        spins > 0 && sleeps == 0,
        "behind a reader: {spins} spins, {sleeps} sleeps"
    );
}

/// Claim: with NONSPINNABLE set, a second writer sleeps without spinning.
/// A reader holds 100 us; W1 asks at 1 us, spins its 10.5 us on the reader,
/// gives up, marks the lock non-spinnable and sleeps; W2 asks at 30 us and
/// must sleep at once. Fails on an rwsem without NONSPINNABLE (W2 would spin
/// its own 10.5 us).
#[test]
fn rwsem_nonspinnable_makes_the_next_writer_sleep_at_once() {
    let lock = RwLock::<Rwsem<Sim>, ()>::new(());
    let marked = Cell::new(false);
    let (lock, marked) = (&lock, &marked);
    let bodies: Vec<Body<'_>> = vec![
        Box::new(move || {
            let g = lock.read();
            Sim::udelay(100_000);
            marked.set(lock.raw().nonspinnable());
            drop(g);
        }),
        Box::new(move || {
            Sim::udelay(1_000);
            drop(lock.write());
        }),
        Box::new(move || {
            Sim::udelay(30_000);
            drop(lock.write());
        }),
    ];
    let (_, stats) = scene("rwsem nonspinnable", 3, bodies);
    let (w1, w2) = (&stats[1], &stats[2]);
    assert!(
        marked.get(),
        "the lock was not non-spinnable at the reader's release"
    );
    assert_eq!(get(w1, Event::NoSpin), 1, "W1 did not mark the lock");
    assert!(get(w1, Event::Spin) > 0 && get(w1, Event::Sleep) >= 1);
    assert_eq!(
        (get(w2, Event::Spin), get(w2, Event::Sleep)),
        (0, 1),
        "W2 (spins, sleeps) on a non-spinnable lock"
    );
}

// ---------------------------------------------------------------- reader fast path

/// Eight readers on eight CPUs, 200 reads each: returns, over all threads,
/// (slow-path reads, sleeps).
fn reader_only_contention<L: RawRwLock<Platform = Sim> + KindInfo>() -> (u64, u64) {
    let lock = RwLock::<L, ()>::new(());
    let lock = &lock;
    let bodies: Vec<Body<'_>> = (0..8)
        .map(|_| {
            Box::new(move || {
                for _ in 0..200 {
                    let g = lock.read();
                    Sim::udelay(100);
                    drop(g);
                    Sim::user_work(50);
                }
            }) as Body<'_>
        })
        .collect();
    let (_, stats) = scene(L::KIND.name(), 8, bodies);
    let sum = |ev| stats.iter().map(|s| get(s, ev)).sum::<u64>();
    (sum(Event::ContendedRead), sum(Event::Sleep))
}

/// Claim: the reader fast path (one add, kept unless a writer or waiter
/// shows) never fails because of other readers, so reader contention never
/// sleeps nor even takes the slow path. Fails on a load + CAS fast path,
/// which loses CASes to other readers.
#[test]
fn rwsem_readers_contending_with_readers_take_no_slow_path() {
    assert_eq!(reader_only_contention::<Rwsem<Sim>>(), (0, 0));
    assert_eq!(reader_only_contention::<RwsemXadd<Sim>>(), (0, 0));
}

// ---------------------------------------------------------------- handoff

/// Claim: today's rwsem reserves the lock for a writer starved past 4 ms
/// (RWSEM_FLAG_HANDOFF). Ten rounds, 6 ms apart, each on the default
/// profile's two sockets: a blocker holds the lock 100 us; writer W, on the
/// far socket, asks 10 us in, spins out its 25 us and sleeps; just before
/// the blocker lets go, three stealers on the near socket start taking the
/// lock back to back for 10 us each, spinning for it in between (their spin
/// budget outlasts a hold, so one always spins), until W has had it or the
/// round is 5.5 ms old. A stealer is a die-local transfer (48 ns) from the
/// freed lock; W wakes on an idle CPU (10 us), so it loses every race until
/// its wait timeout. Returns each round's wait of W, in us.
fn starved_writers_wait<L: RawRwLock<Platform = Sim> + KindInfo>() -> Vec<u64> {
    const ROUNDS: u64 = 10;
    const ROUND_NS: u64 = 6_000_000;
    const STEAL_UNTIL_NS: u64 = 5_500_000;
    /// The first CPU of the second socket in the default profile.
    const SOCKET_1: usize = 18;
    let lock = RwLock::<L, ()>::new(());
    let waits = RefCell::new(Vec::new());
    let (lock, waits) = (&lock, &waits);
    let sleep_until = |t: u64| Sim::sleep(t.saturating_sub(Sim::now_ns()).max(1));
    let mut bodies: Vec<Body<'_>> = vec![Box::new(move || {
        for k in 0..ROUNDS {
            sleep_until(k * ROUND_NS + 1_000);
            let g = lock.write();
            Sim::udelay(100_000);
            drop(g);
        }
    })];
    for _ in 0..3 {
        bodies.push(Box::new(move || {
            for k in 0..ROUNDS {
                let start = k * ROUND_NS;
                sleep_until(start + 95_000);
                while waits.borrow().len() as u64 == k && Sim::now_ns() < start + STEAL_UNTIL_NS {
                    let g = lock.write();
                    Sim::udelay(10_000);
                    drop(g);
                }
            }
        }));
    }
    // Threads that only place W on the second socket.
    while bodies.len() < SOCKET_1 {
        bodies.push(Box::new(|| {}));
    }
    bodies.push(Box::new(move || {
        for k in 0..ROUNDS {
            sleep_until(k * ROUND_NS + 11_000);
            let t0 = Sim::now_ns();
            let g = lock.write();
            waits.borrow_mut().push((Sim::now_ns() - t0) / 1_000);
            drop(g);
        }
    }));
    scene(L::KIND.name(), 2 * SOCKET_1, bodies);
    waits.take()
}

/// Once starved, each writer is owner within two holds and a wake-up (an
/// idle CPU takes 10 us to wake): the release that finds it starved
/// reserves the lock (or grants it, if free), and the next one hands it
/// over; the kernel's woken writer likewise loses once more, sets HANDOFF,
/// and gets the next release. Fails on stealers that ignore
/// the reservation (some writer loses a race it should not) and on a lock
/// without stealing (no writer would wait 4 ms).
#[test]
fn rwsem_a_writer_starved_past_4ms_is_the_next_owner() {
    let waits = starved_writers_wait::<Rwsem<Sim>>();
    let off: Vec<&u64> = waits
        .iter()
        .filter(|&&us| !(4_000..=4_050).contains(&us))
        .collect();
    assert!(
        off.is_empty(),
        "waits {waits:?} us: {off:?} not within 50 us after 4 ms"
    );
}

/// rwsem-xadd has no handoff: the writer loses until the stealers stop.
#[test]
fn rwsem_xadd_lets_stealers_starve_a_writer() {
    let waits = starved_writers_wait::<RwsemXadd<Sim>>();
    assert!(
        waits.iter().all(|&us| us > 5_000),
        "a writer got the lock before the stealers stopped: {waits:?} us"
    );
}

// ---------------------------------------------------------------- reader batches

/// A writer holds 40 ms; 300 readers and, between the 150th and the 151st,
/// one writer queue in arrival order; the release wakes some. Returns the
/// readers the release granted (the releaser's ReaderWoken), its wake
/// batches, and how many were queued when the writer arrived.
fn release_onto_300_readers<L: RawRwLock<Platform = Sim> + KindInfo>() -> (u64, u64, usize) {
    const READERS: u64 = 300;
    /// Arrivals this far apart from 10 us on, asleep until then (off the
    /// CPUs, so 300 of them fit on 8): more than a waking CPU's 10 us exit
    /// latency plus the queued writer's 25 us spin, so arrival order is
    /// queue order.
    const GAP_NS: u64 = 100_000;
    let lock = RwLock::<L, ()>::new(());
    let ahead = Cell::new(0usize);
    let (lock, ahead) = (&lock, &ahead);
    let mut bodies: Vec<Body<'_>> = vec![Box::new(move || {
        let g = lock.write();
        Sim::udelay(40_000_000);
        drop(g);
    })];
    for r in 0..READERS {
        bodies.push(Box::new(move || {
            Sim::sleep(10_000 + r * GAP_NS);
            let g = lock.read();
            Sim::udelay(10_000);
            drop(g);
        }));
    }
    bodies.push(Box::new(move || {
        Sim::sleep(10_000 + 150 * GAP_NS - GAP_NS / 2);
        ahead.set(queued(lock.raw()));
        drop(lock.write());
    }));
    let (_, stats) = scene(L::KIND.name(), 8, bodies);
    let s = &stats[0];
    (
        get(s, Event::ReaderWoken),
        get(s, Event::WakeBatch),
        ahead.get(),
    )
}

/// Threads parked on a sleeping lock (the sleeping kinds' `queued`).
fn queued<L: RawRwLock + 'static>(lock: &L) -> usize {
    let any: &dyn std::any::Any = lock;
    if let Some(l) = any.downcast_ref::<Rwsem<Sim>>() {
        l.queued()
    } else if let Some(l) = any.downcast_ref::<RwsemXadd<Sim>>() {
        l.queued()
    } else if let Some(l) = any.downcast_ref::<RwsemFifo<Sim>>() {
        l.queued()
    } else {
        unreachable!("not a sleeping rwsem")
    }
}

/// Claim: today's rwsem wakes up to 256 readers at once, from anywhere in
/// the queue, past the queued writer (MAX_READERS_WAKEUP). Fails on any
/// other cap (3, unbounded) and on a contiguous-only wake (150).
#[test]
fn rwsem_one_release_wakes_256_of_300_queued_readers() {
    assert_eq!(release_onto_300_readers::<Rwsem<Sim>>(), (256, 1, 150));
}

/// rwsem-xadd and the 2007 rwsem wake the 150 readers ahead of the writer.
#[test]
fn older_rwsems_wake_the_readers_ahead_of_the_first_writer() {
    assert_eq!(release_onto_300_readers::<RwsemXadd<Sim>>(), (150, 1, 150));
    assert_eq!(release_onto_300_readers::<RwsemFifo<Sim>>(), (150, 1, 150));
}

// ---------------------------------------------------------------- percpu-rwsem

/// The default profile's grace period, ns.
fn rcu_gp_ns() -> u64 {
    profile().work.rcu_gp_ns as u64
}

/// Claim: percpu-rwsem's first writer waits an RCU grace period
/// (rcu_sync_enter from idle); a writer within a grace period of the last
/// one's exit does not. Fails on a writer that skips the grace period, or
/// pays it every time.
#[test]
fn percpu_writer_waits_a_grace_period_once() {
    let lock = RwLock::<PercpuRwsem<Sim>, ()>::new(());
    let took = RefCell::new(Vec::new());
    let (lock, took) = (&lock, &took);
    let bodies: Vec<Body<'_>> = vec![Box::new(move || {
        for _ in 0..2 {
            let t0 = Sim::now_ns();
            let g = lock.write();
            took.borrow_mut().push(Sim::now_ns() - t0);
            drop(g);
            Sim::udelay(1_000);
        }
    })];
    let (_, stats) = scene("percpu grace period", 1, bodies);
    let took = took.take();
    let gp = rcu_gp_ns();
    assert!(
        took[0] >= gp,
        "the first write took {} ns, the grace period is {gp}",
        took[0]
    );
    assert!(took[1] < gp / 100, "the second write took {} ns", took[1]);
    assert_eq!(get(&stats[0], Event::GracePeriod), 1);
}

/// Claim: a holding percpu-rwsem writer blocks new readers: a reader that
/// asks while the writer holds sleeps and gets in only after the release.
#[test]
fn percpu_writer_blocks_new_readers_until_it_releases() {
    let lock = RwLock::<PercpuRwsem<Sim>, ()>::new(());
    let (held, released, read_at) = (Cell::new(false), Cell::new(0u64), Cell::new(0u64));
    let (lock, held, released, read_at) = (&lock, &held, &released, &read_at);
    let bodies: Vec<Body<'_>> = vec![
        Box::new(move || {
            let g = lock.write();
            held.set(true);
            Sim::udelay(100_000);
            released.set(Sim::now_ns());
            drop(g);
        }),
        Box::new(move || {
            while !held.get() {
                Sim::sleep(10_000);
            }
            let g = lock.read();
            read_at.set(Sim::now_ns());
            drop(g);
        }),
    ];
    let (_, stats) = scene("percpu blocks readers", 2, bodies);
    let r = &stats[1];
    assert!(
        read_at.get() >= released.get(),
        "the reader got in at {} ns, the writer released at {} ns",
        read_at.get(),
        released.get()
    );
    assert_eq!((get(r, Event::ContendedRead), get(r, Event::Sleep)), (1, 1));
}

/// Eight readers, one per CPU, 300 reads each on lock `L`: returns the
/// lock-word accesses that missed (moved a line), and the counters seen on
/// each CPU's slot while all eight held at once (percpu-rwsem only).
fn reader_line_misses<L: RawRwLock<Platform = Sim> + KindInfo>() -> u64 {
    let lock = RwLock::<L, ()>::new(());
    let lock = &lock;
    let bodies: Vec<Body<'_>> = (0..8)
        .map(|_| {
            Box::new(move || {
                for _ in 0..300 {
                    let g = lock.read();
                    Sim::udelay(200);
                    drop(g);
                    Sim::user_work(100);
                }
            }) as Body<'_>
        })
        .collect();
    let (ended, _) = scene(L::KIND.name(), 8, bodies);
    ended.counters.misses
}

/// Claim: percpu-rwsem readers touch only their own CPU's counter (and a
/// read-mostly line), so 2400 reads on eight CPUs move almost no line,
/// where an rwsem's shared count moves on nearly every read. Fails if
/// readers share a counter.
#[test]
fn percpu_readers_touch_only_their_own_counter() {
    let percpu = reader_line_misses::<PercpuRwsem<Sim>>();
    let rwsem = reader_line_misses::<Rwsem<Sim>>();
    assert!(
        rwsem > 2_000,
        "the rwsem's shared count moved only {rwsem} times"
    );
    assert!(
        percpu <= 64,
        "percpu-rwsem readers moved {percpu} lines (an rwsem's: {rwsem})"
    );
}

/// And the counters themselves: while all eight hold, each CPU's counter
/// holds one reader.
#[test]
fn percpu_each_cpu_counts_its_own_reader() {
    const CPUS: usize = 8;
    let lock = PercpuRwsem::<Sim>::new();
    let (inside, seen) = (Cell::new(0usize), RefCell::new(Vec::new()));
    let (lock, inside, seen) = (&lock, &inside, &seen);
    let bodies: Vec<Body<'_>> = (0..CPUS)
        .map(|_| {
            Box::new(move || {
                let t = lock.lock_shared();
                inside.set(inside.get() + 1);
                while inside.get() < CPUS {
                    Sim::udelay(1_000);
                }
                if seen.borrow().is_empty() {
                    let counts: Vec<usize> = (0..CPUS).map(|c| lock.readers_in_slot(c)).collect();
                    *seen.borrow_mut() = counts;
                }
                Sim::udelay(1_000);
                // SAFETY: granted just above.
                unsafe { lock.unlock_shared(t) };
            }) as Body<'_>
        })
        .collect();
    scene("percpu slots", CPUS, bodies);
    assert_eq!(*seen.borrow(), vec![1; CPUS]);
}

// ---------------------------------------------------------------- every kind

/// Every kind runs the simulator's pure lock loop (torture with writers
/// only) at 8 virtual CPUs and every thread finishes (nothing lost, nothing
/// livelocked, no exclusion failure).
#[test]
fn every_kind_finishes_the_lock_loop_at_8_cpus() {
    let profile = profile();
    let mut report = String::new();
    for kind in LockKind::ALL {
        let o = torture::run(&Config {
            kind,
            threads: [0, 8, 0, 0],
            // Long enough for percpu-rwsem's first grace period.
            duration: std::time::Duration::from_millis(20),
            load: std::time::Duration::from_micros(1),
            interval: std::time::Duration::from_micros(2),
            sched: false,
            exponential: false,
            seed: 3,
            engine: Engine::Sim(Box::new(SimSpec {
                cpus: 8,
                preempt: Preempt::Voluntary,
                machine: profile.clone(),
            })),
        })
        .expect("a simulated torture run");
        let total: u64 = o.threads.iter().map(|t| t.taken).sum();
        if o.stuck() > 0 || o.fails() > 0 || total == 0 {
            report += &format!(
                "{kind}: {} stuck, {} exclusion failures, {total} acquisitions\n",
                o.stuck(),
                o.fails()
            );
        }
    }
    assert!(report.is_empty(), "{report}");
}
