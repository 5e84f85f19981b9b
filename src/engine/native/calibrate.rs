//! Measurements of this machine for `rmap-storm calibrate`: what the
//! simulator's machine profile needs and real threads can time.
//!
//! | figure | how | profile key |
//! |---|---|---|
//! | atomic | a loop of uncontended `fetch_add` (LOCK XADD) on one line | `cache.atomic_ns` |
//! | pause | a loop of `spin_loop()` (PAUSE on x86) | `cache.pause_ns` |
//! | syscall | a loop of getppid(2), which no libc caches | `work.syscall_ns` |
//! | clock | a loop of the native platform's clock reads (`Instant::now`, the vDSO's clock_gettime) | `work.clock_ns` |
//! | yield | a loop of sched_yield(2) (`std::thread::yield_now`) on a thread pinned to the first CPU, where nothing else of this process runs: the call with no switch | `sched.yield_ns` |
//! | cold parking | on a thread pinned to the first CPU, with another thread parked there: parking_lot_core's park (whose validation refuses) and unpark (whose filter stops at that sleeper) through the native platform, each from the call to its callback, right after a 5 us sleep (the thread switched out and back) and then at once again: the mean cold call less the mean warm one (calls under 16 us, an interrupt's beyond), averaged over park and unpark. A mean, since cold calls take one of two times | `sched.park_cold_ns` |
//! | busy-wait | udelay(2 us) of the native platform (a spin on the clock), each call timed: the median, less the 2 us and the timing's own clock read | `work.busy_wait_extra_ns` |
//! | ping-pong | two threads pinned to two CPUs advance one counter in turns with CAS; half a round trip moves the line once (the note flags a figure faster than any two cores, as SMT siblings answer) | `cache.die_ns` |
//! | handoff, one CPU | two threads pinned to one CPU pass a token with park/unpark (futex wait/wake), lmbench lat_ctx style: per handoff a wake, a wait and a switch | `sched.ctx_switch_ns`, `sched.wakeup_ns` |
//! | handoff spread | each handoff of the one-CPU run timed on its own (the giver's clock before the wake, the taker's once it runs): interquartile range / ln 3, the scale of the exponential tail the simulator draws latencies with; over √2 since the handoff is a wake-up and a switch | `sched.jitter_ns` |
//! | handoff, two CPUs | the same across two CPUs: the woken thread's CPU is idle; and the giver's own time in the wake call (try_to_wake_up and the IPI to the idle CPU; under a hypervisor the IPI exits to the host) | `sched.wakeup_idle_ns`, `sched.wakeup_ipi_ns` |
//! | handoff, two busy CPUs | the same with a thread spinning in user space on each CPU, which the wakee preempts: the median single handoff, less a syscall and a switch (the reschedule IPI from the waker's CPU and its delivery; under a hypervisor both sides exit to the host) | `sched.resched_ipi_ns` |
//! | noise | a thread pinned to the first CPU reads the clock in a loop; a gap over 2 us (a clock read takes tens of ns) is an interruption, osnoise style: the uninterrupted time per gap, and the gaps' mean | `sched.noise_interval_ns`, `sched.noise_ns` |
//! | walk | the model's own native storm for 1 s (2 s on one CPU; a trial still in its start-up is run again, three tries in all), its threads pinned round robin to every CPU (or to the first N, `--storm-cpus N`, as a run pinned to N CPUs runs), its locks rw_semaphores; each page_referenced walk of at least half the vmas a page of the ancestor's visits at the start (a page the whole family maps) timed by the walker's CPU clock (CLOCK_THREAD_CPUTIME_ID, so time switched out is left out): their CPU time over their vmas. The caches hold what the storm leaves in them, which no walk in isolation reproduces | `work.vma_visit_ns` |
//! | walk start | in the walk's storm, every page_referenced walk of exactly one vma timed by the walker's CPU clock into 4 ns buckets: the mean of those under 16 us (an interrupt's lie beyond), less two CPU-clock reads in a row (the timing's share), the trial's vma visit and the rw_semaphore's two atomics (down_read and up_read: the simulator's line model charges a lock's accesses itself). What a walk costs before its first vma: the page's anon_vma and the interval tree's search, which the per-vma figure leaves out; a walk that spun for its read lock counts the spin too (readers share the storm's rw_semaphores, so only a writer's hold makes one) | `work.walk_ns` |
//! | lru | isolate_lru_folios of a batch of 32 pages off the inactive list of the model's native world and their putback, per page moved (isolated or put back) | `work.lru_page_ns` |
//! | fork | fork of a child of the model's first task and the child's exit, in turn, in a loop in the model's native world: the vmas, AVCs and PTEs a cycle copies and frees, and ns per cycle (the figure only when the storm forks nothing) | `work.vma_ns`, `work.avc_ns`, `work.pte_copy_ns`, scaled together from the base profile's (their proportions are not measured) |
//! | storm fork | in the walk's storm, each fork-exit operation's fork and exit timed by its thread's CPU clock ([`ForkProbe`]): the median, less two CPU-clock reads in a row, taken to do the loop's work (the storm forks children of the first task too). The caches hold what the walks and faults leave, so a fork pays for bringing its lines back (1.3x the loop's time on one CPU of the 2-vCPU Xeon VM, 1.8x on two: 5.4 and 7.7 us against 4.0-4.5); its rmap and mmap locks' own accesses stay in it (an aim7 fork and exit take the root anon_vma 16 times and an mmap_lock 3 times, all WRITE: some 40 RMWs, ~4%) | the same keys, scaled by it instead |
//! | unmap | reclaim (add_to_swap, try_to_unmap to swap entries, free) of 8 of those pages once, cold as the walk, in a fresh native world per trial, per vma unmapped | `work.unmap_pte_ns` |
//! | grace period | synchronize_rcu() as the native platform runs it: membarrier(MEMBARRIER_CMD_GLOBAL), which returns after an RCU grace period of this machine's kernel | `work.rcu_gp_ns` |
//! | touch | in the walk's storm, the touch role's operations that did no direct reclaim and found their page mapped (a random task from the roster with a user reference, its page table, the MMU's access of a random anon page, set young), each timed whole on the monotonic clock ([`TouchProbe`]): the mean of those under 16 us, less the one clock read the timing adds. A mean, not a median: these touches take two times (the task's lines cached or not, some 100 and 210 ns on the test VM), and the median jumped between them from trial to trial | `work.touch_ns` |
//!
//! Not timed: which fair scheduler this kernel runs (`sched.policy`: EEVDF
//! from 6.6, by /proc/sys/kernel/osrelease) and its tunables' defaults for
//! this many CPUs, scaled by 1 + ilog2(min(CPUs, 8)) as kernel/sched/fair.c
//! scales them (EEVDF's base slice 0.75 ms, 0.70 ms from 6.15; CFS's
//! latency 6 ms, minimum granularity 0.75 ms, wake-up granularity 1 ms).
//! Where debugfs is readable (root), the base slice in effect is read from
//! /sys/kernel/debug/sched/debug instead, since 6.12.y backported the
//! 0.70 ms one and a site may tune it.
//!
//! Each figure is the median of several trials; every trial reports its own
//! mean per operation, so the spread across trials shows the noise of a
//! shared machine. Nothing here asserts a time: the figures are what this
//! machine did.

use crate::engine::cpus::{CpuList, online_cpus};
use crate::engine::native::pin::pin_current_thread;
use crate::engine::native::storm;
use crate::engine::storm::costs::Costs;
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::fork_probe::ForkProbe;
use crate::engine::storm::time_buckets::TimeBuckets;
use crate::engine::storm::touch_probe::TouchProbe;
use crate::engine::storm::walk_probe::WalkProbe;
use crate::locks::platform::{FilterOp, Native, ParkToken, Platform, UnparkToken};
use crate::locks::{KindInfo, LockKind, LockVisitor, RawRwLock};
use crate::model::machine::{MachineProfile, SchedPolicy};
use crate::model::{Model, Role, WorldSpec};
use crate::rmap::lru::{List, SWAP_CLUSTER_MAX, Verdict};
use crate::rmap::step_locks::WorkTally;
use crate::rmap::{Capacity, MmId, PageId, World, pte};
use crate::{Error, Result};
use crossbeam_utils::CachePadded;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// A trial that takes longer than this has lost its partner thread (a CPU
/// that vanished, a pin that did not hold): it fails rather than hangs.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(20);

/// How much to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Trials per figure (the figure is their median).
    pub trials: usize,
    /// A twentieth of the work per trial: for tests and a first look. The
    /// storm is not shortened ([`STORM_SPAN`] says why).
    pub quick: bool,
    /// Run the model's storm on the first this many CPUs this process may
    /// use, as `run --pin 0-(N-1)` runs it (None: on all of them). What a
    /// vma visit or a touch costs there depends on how many CPUs the storm's
    /// threads share: on one, every role's lines and every switch go
    /// through the same core's caches.
    pub storm_cpus: Option<usize>,
}

impl Plan {
    /// Operations per trial for a figure that does `full` in a normal run.
    fn ops(&self, full: u64) -> u64 {
        if self.quick { (full / 20).max(1) } else { full }
    }
}

/// One measured figure: the per-operation mean of each trial, in ns.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub trials_ns: Vec<f64>,
}

impl Figure {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.trials_ns.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The median trial (the mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        let v = self.sorted();
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }

    pub fn min(&self) -> f64 {
        self.sorted()[0]
    }

    pub fn max(&self) -> f64 {
        *self.sorted().last().expect("a figure has trials")
    }
}

/// Everything `calibrate` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// The CPUs this process may run on; the two-CPU figures use the first two.
    pub cpus: Vec<usize>,
    pub atomic: Figure,
    pub pause: Figure,
    pub syscall: Figure,
    /// ns per clock read.
    pub clock: Figure,
    /// ns a busy-wait takes beyond its length.
    pub busy_wait_extra: Figure,
    /// ns per sched_yield() that finds nothing else to run.
    pub sched_yield: Figure,
    /// ns a park or unpark right after a switch takes beyond a warm one.
    pub park_cold: Figure,
    /// None on a single CPU.
    pub pingpong: Option<Figure>,
    pub handoff_one_cpu: Figure,
    /// The spread of single handoffs on one CPU (see [`exp_scale`]).
    pub jitter: Figure,
    /// None on a single CPU.
    pub handoff_two_cpus: Option<Figure>,
    /// The giver's wake call in that handoff, its median per trial (None on
    /// a single CPU).
    pub wake_remote: Option<Figure>,
    /// The median single handoff across two CPUs each busy with a spinning
    /// thread (None on a single CPU).
    pub handoff_busy: Option<Figure>,
    /// Uninterrupted time between two interruptions of one CPU.
    pub noise_interval: Figure,
    /// How long an interruption lasts (0 in a trial that saw none).
    pub noise: Figure,
    /// ns per vma visited by the long walks of the model's native storm.
    pub walk: Figure,
    /// ns a walk of the model's native storm costs before its first vma:
    /// its mean walk of one vma, less the clock's share, the visit and the
    /// lock's two atomics (None if a trial walked no such page).
    pub walk_start: Option<Figure>,
    /// The walks of one vma those trials timed, all trials together.
    pub one_vma_walks: u64,
    /// Two reads of this thread's CPU clock in a row: the share of a timed
    /// walk that is the timing's.
    pub cpu_clock: Figure,
    /// The long walks those trials timed, all trials together.
    pub storm_walks: u64,
    /// The CPUs the storm's threads were pinned to, round robin.
    pub storm_cpus: Vec<usize>,
    /// The shortest walk they counted: half the vmas a walk of an
    /// ancestor's page visits in the model's world as built.
    pub storm_min_vmas: u32,
    /// How long each of those trials ran the storm.
    pub storm_span: Duration,
    /// ns per vma unmapped (try_to_unmap of a page the whole family maps).
    pub unmap: Figure,
    /// ns per page moved between the LRU lists and a reclaim batch.
    pub lru: Figure,
    /// ns per fork and exit of a task, in a loop of their own.
    pub fork: Figure,
    /// The work one fork and exit did.
    pub fork_work: WorkTally,
    /// ns per fork and exit in the storm (its median, less the two
    /// timings' share): None if some trial's storm timed none.
    pub storm_fork: Option<Figure>,
    /// The forks those trials timed, all trials together.
    pub storm_forks: u64,
    /// ns per touch of a mapped page in the storm (their mean, less a
    /// clock read).
    pub touch: Figure,
    /// ns per synchronize_rcu() of the native platform.
    pub grace_period: Figure,
    /// vmas one walk visits in the model's world.
    pub walk_vmas: u32,
    /// Bytes written before each timed walk and unmap ([`Evictor`]).
    pub evicted_bytes: usize,
    /// This kernel's release (/proc/sys/kernel/osrelease), if readable.
    pub kernel: Option<String>,
    /// The running kernel's EEVDF base slice in ns, if [`SCHED_DEBUG`] is
    /// readable: a backported or tuned slice, which the release cannot tell.
    pub base_slice_ns: Option<f64>,
}

/// Measure every figure of [`Calibration`] on this machine; `model` is the
/// one whose native world and storm the world's costs are measured in, the
/// storm spending `base`'s costs where a native run spends a profile's.
pub fn measure(plan: &Plan, model: &Model, base: &MachineProfile) -> Result<Calibration> {
    if model.workload.roles[Role::Touch].threads == 0 {
        return Err(Error::usage(
            "calibrate: the model's storm has no touch thread to time (allowed: workload.touch.threads >= 1)",
        ));
    }
    let world = &model.world;
    let cpus = allowed_cpus()?;
    let storm_cpus = match plan.storm_cpus {
        Some(n) if n == 0 || n > cpus.len() => {
            return Err(Error::usage(format!(
                "calibrate: a storm on {n} CPUs, but this process may use {} (allowed: 1..={})",
                cpu_list(&cpus),
                cpus.len()
            )));
        }
        Some(n) => cpus[..n].to_vec(),
        None => cpus.clone(),
    };
    let pair = (cpus.len() >= 2).then(|| (cpus[0], cpus[1]));
    let trials = |f: &mut dyn FnMut() -> Result<f64>| -> Result<Figure> {
        let trials_ns = (0..plan.trials).map(|_| f()).collect::<Result<_>>()?;
        Ok(Figure { trials_ns })
    };
    let atomic = trials(&mut || Ok(atomic_rmw(plan.ops(2_000_000))))?;
    let pause = trials(&mut || Ok(pause(plan.ops(200_000))))?;
    let syscall = trials(&mut || Ok(syscall(plan.ops(1_000_000))))?;
    let clock = trials(&mut || Ok(clock(plan.ops(1_000_000))))?;
    let read_ns = clock.median();
    let busy_wait_extra = trials(&mut || Ok(busy_wait_extra(plan.ops(50_000), read_ns)))?;
    let sched_yield = trials(&mut || sched_yield(cpus[0], plan.ops(500_000)))?;
    let park_cold = trials(&mut || park_cold(cpus[0], plan.ops(2_000)))?;
    let pingpong = pair
        .map(|p| trials(&mut || pingpong(p, plan.ops(200_000))))
        .transpose()?;
    let mut jitters = Vec::with_capacity(plan.trials);
    let handoff_one_cpu = trials(&mut || {
        let h = handoff((cpus[0], cpus[0]), plan.ops(20_000), Cpus::Idle)?;
        jitters.push(h.jitter_ns);
        Ok(h.mean_ns)
    })?;
    let jitter = Figure { trials_ns: jitters };
    let mut wakes = Vec::with_capacity(plan.trials);
    let handoff_two_cpus = pair
        .map(|p| {
            trials(&mut || {
                let h = handoff(p, plan.ops(5_000), Cpus::Idle)?;
                wakes.push(h.wake_ns);
                Ok(h.mean_ns)
            })
        })
        .transpose()?;
    let wake_remote = handoff_two_cpus
        .as_ref()
        .map(|_| Figure { trials_ns: wakes });
    let handoff_busy = pair
        .map(|p| trials(&mut || Ok(handoff(p, plan.ops(2_000), Cpus::Busy)?.median_ns)))
        .transpose()?;
    let mut lengths = Vec::with_capacity(plan.trials);
    let noise_interval = trials(&mut || {
        let n = noise(cpus[0], plan.ops(150_000_000))?;
        lengths.push(n.mean_ns);
        Ok(n.interval_ns)
    })?;
    let noise = Figure { trials_ns: lengths };
    let cpu_clock = trials(&mut || Ok(cpu_clock_gap(plan.ops(200_000))))?;
    let span = storm_span(storm_cpus.len());
    let walker = Walker::new(world)?;
    let storm_min_vmas = walker.vmas.div_ceil(2);
    let mut storm_walks = 0;
    let mut touches = Vec::with_capacity(plan.trials);
    let mut starts = Vec::with_capacity(plan.trials);
    let mut one_vma_walks = 0;
    let mut storm_forks = Vec::with_capacity(plan.trials);
    let mut storm_fork_count = 0;
    let walk = trials(&mut || {
        let t =
            settled_storm_trial(|| storm_trial(model, base, &storm_cpus, span, storm_min_vmas))?;
        storm_walks += t.walks;
        touches.push((t.touch_ns - read_ns).max(0.0));
        if let Some((mean, n)) = t.one_vma {
            one_vma_walks += n;
            let start = mean - cpu_clock.median() - t.visit_ns - 2.0 * atomic.median();
            starts.push(start.max(0.0));
        }
        if let Some((median, n)) = t.fork {
            storm_fork_count += n;
            storm_forks.push((median - 2.0 * cpu_clock.median()).max(0.0));
        }
        Ok(t.visit_ns)
    })?;
    let touch = Figure { trials_ns: touches };
    let walk_start = (starts.len() == plan.trials).then_some(Figure { trials_ns: starts });
    let storm_fork = (storm_forks.len() == plan.trials).then_some(Figure {
        trials_ns: storm_forks,
    });
    let mut cold = Evictor::new(walker.world.resident_bytes());
    let evicted_bytes = cold.lines.len();
    let unmap =
        trials(&mut || Ok(Walker::new(world)?.ns_per_vma_unmapped(plan.ops(8), &mut cold)))?;
    // One world for the LRU moves and the forks, with room for the one
    // child a fork cycle holds.
    let cap = Capacity::for_spec(world);
    let cap = Capacity {
        mms: cap.mms + 1,
        ..cap
    };
    let mut spare = World::build_with(world, cap);
    let lru = trials(&mut || lru_moves(&mut spare, plan.ops(2_000_000)))?;
    let mut fork_work = WorkTally::default();
    let fork = trials(&mut || {
        let (ns, work) = fork_exit(&mut spare, plan.ops(2_000))?;
        fork_work = work;
        Ok(ns)
    })?;
    let grace_period = trials(&mut || Ok(grace_period(plan.ops(5))))?;
    Ok(Calibration {
        cpus,
        atomic,
        pause,
        syscall,
        clock,
        busy_wait_extra,
        sched_yield,
        park_cold,
        pingpong,
        handoff_one_cpu,
        jitter,
        handoff_two_cpus,
        wake_remote,
        handoff_busy,
        noise_interval,
        noise,
        walk,
        walk_start,
        one_vma_walks,
        cpu_clock,
        unmap,
        lru,
        fork,
        fork_work,
        storm_fork,
        storm_forks: storm_fork_count,
        touch,
        grace_period,
        walk_vmas: walker.vmas,
        storm_walks,
        storm_cpus,
        storm_min_vmas,
        storm_span: span,
        evicted_bytes,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string()),
        base_slice_ns: std::fs::read_to_string(SCHED_DEBUG)
            .ok()
            .and_then(|debug| base_slice_in(&debug)),
    })
}

/// A clock-reading gap longer than this is an interruption: far beyond one
/// read of the clock (tens of ns), below the shortest interrupt handler.
const NOISE_GAP_NS: u64 = 2_000;

/// One noise trial: interruptions of a CPU seen by a thread spinning on it.
struct NoiseTrial {
    /// Uninterrupted time per interruption (the whole span if none came).
    interval_ns: f64,
    /// Their mean length (0 if none came).
    mean_ns: f64,
}

/// Spin `span_ns` on `cpu` reading the clock, and count the gaps.
fn noise(cpu: usize, span_ns: u64) -> Result<NoiseTrial> {
    on_cpu(cpu, || {
        let origin = Instant::now();
        let now = || origin.elapsed().as_nanos() as u64;
        let start = now();
        let (mut last, mut gaps, mut stolen) = (start, 0u64, 0u64);
        let end = start + span_ns;
        while last < end {
            let t = now();
            if t - last > NOISE_GAP_NS {
                gaps += 1;
                stolen += t - last;
            }
            last = t;
        }
        // The gaps lie inside the loop's time, so this cannot underflow.
        let quiet = (last - start - stolen) as f64;
        NoiseTrial {
            interval_ns: quiet / gaps.max(1) as f64,
            mean_ns: if gaps == 0 {
                0.0
            } else {
                stolen as f64 / gaps as f64
            },
        }
    })
}

/// Run `f` on a thread of its own pinned to `cpu`, and return what it gives.
fn on_cpu<T: Send>(cpu: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_current_thread(cpu)
                .map_err(|e| Error::failed(format!("calibrate: pinning to CPU {cpu}: {e}")))?;
            Ok(f())
        })
        .join()
        .expect("a calibration thread does not panic")
    })
}

fn per_op(elapsed: Duration, ops: u64) -> f64 {
    elapsed.as_nanos() as f64 / ops as f64
}

fn atomic_rmw(ops: u64) -> f64 {
    let line = CachePadded::new(AtomicU64::new(0));
    let t0 = Instant::now();
    for _ in 0..ops {
        black_box(&line).fetch_add(1, Ordering::AcqRel);
    }
    per_op(t0.elapsed(), ops)
}

fn pause(ops: u64) -> f64 {
    let t0 = Instant::now();
    for _ in 0..ops {
        std::hint::spin_loop();
    }
    per_op(t0.elapsed(), ops)
}

fn syscall(ops: u64) -> f64 {
    let t0 = Instant::now();
    for _ in 0..ops {
        // SAFETY: getppid has no preconditions and cannot fail.
        black_box(unsafe { libc::getppid() });
    }
    per_op(t0.elapsed(), ops)
}

fn clock(ops: u64) -> f64 {
    let t0 = Instant::now();
    for _ in 0..ops {
        black_box(Native::now_ns());
    }
    per_op(t0.elapsed(), ops)
}

/// ns per sched_yield() of a thread pinned to `cpu`: with no other thread of
/// this process there, the call returns without a switch, so this is the
/// syscall and the scheduler's pass alone.
fn sched_yield(cpu: usize, ops: u64) -> Result<f64> {
    on_cpu(cpu, || {
        let t0 = Instant::now();
        for _ in 0..ops {
            std::thread::yield_now();
        }
        per_op(t0.elapsed(), ops)
    })
}

/// How long [`park_cold`] sleeps before each cold call: long enough for its
/// CPU to switch away and back (natively the cold figure was the same after
/// 5 us as after 50 us, and a sched_yield() ping-pong left the code warm).
const COLD_SLEEP: Duration = Duration::from_micros(5);

/// What parking_lot_core's park and unpark take from the call to the
/// caller's callback when the thread was just switched back in, beyond
/// what they take warm, ns: the mean over park and unpark of their cold
/// mean less their warm mean ([`PARK_BUCKETS`]), `ops` calls each, on
/// `cpu` with one thread parked there for the unparks to find (their
/// filter stops at it, so it sleeps on until the probe ends).
fn park_cold(cpu: usize, ops: u64) -> Result<f64> {
    static SLEEPER: AtomicU64 = AtomicU64::new(0);
    static PROBE: AtomicU64 = AtomicU64::new(0);
    let sleeper = &SLEEPER as *const AtomicU64 as usize;
    let probe = &PROBE as *const AtomicU64 as usize;
    let parked = AtomicBool::new(false);
    std::thread::scope(|s| {
        let sleeper_thread = s.spawn(|| {
            let pinned = pin_current_thread(cpu);
            if pinned.is_err() {
                // Nobody will park: let the prober go on to its own error.
                parked.store(true, Ordering::Release);
            }
            pinned.map_err(|e| Error::failed(format!("calibrate: pinning to CPU {cpu}: {e}")))?;
            // SAFETY: the key is this probe's own static; the callbacks do
            // not park or unpark.
            unsafe {
                Native::park(
                    sleeper,
                    || !parked.swap(true, Ordering::AcqRel),
                    ParkToken(0),
                )
            };
            Ok(())
        });
        while !parked.load(Ordering::Acquire) {
            std::thread::sleep(COLD_SLEEP);
        }
        let figure = on_cpu(cpu, || {
            let park = |entered: &mut u64| {
                // SAFETY: as above; the validation refuses, so nobody parks.
                unsafe {
                    Native::park(
                        probe,
                        || {
                            *entered = Native::now_ns();
                            false
                        },
                        ParkToken(0),
                    )
                };
            };
            let unpark = |entered: &mut u64| {
                // SAFETY: as above; the filter stops at the sleeper.
                unsafe {
                    Native::unpark_filter(
                        sleeper,
                        |_| {
                            *entered = Native::now_ns();
                            FilterOp::Stop
                        },
                        |_| UnparkToken(0),
                    )
                };
            };
            let extra = |call: &dyn Fn(&mut u64)| {
                let [cold, warm] = [(); 2].map(|_| TimeBuckets::new(1, PARK_BUCKETS));
                for _ in 0..ops.max(1) {
                    std::thread::sleep(COLD_SLEEP);
                    for took in [&cold, &warm] {
                        let mut entered = 0;
                        let t0 = Native::now_ns();
                        call(&mut entered);
                        took.add(entered.saturating_sub(t0));
                    }
                }
                let mean = |b: &TimeBuckets| b.mean().map_or(0.0, |(ns, _)| ns);
                mean(&cold) - mean(&warm)
            };
            (extra(&park) + extra(&unpark)) / 2.0
        });
        // SAFETY: as above; this wakes the sleeper for good.
        unsafe { Native::unpark_filter(sleeper, |_| FilterOp::Unpark, |_| UnparkToken(0)) };
        sleeper_thread.join().expect("the sleeper does not panic")?;
        figure
    })
}

/// 1 ns buckets of [`park_cold`]'s calls, up to 16 us as the storm's
/// probes: a longer call was interrupted or switched out. Their means, not
/// medians: a cold call takes one of two times (about 30 and 80 ns on the
/// 2-vCPU Xeon VM, as its code is found in a cache or not), and the median
/// jumped between them from trial to trial (38.5 and 79.5 ns).
const PARK_BUCKETS: usize = 16_384;

/// The length of the busy-wait [`busy_wait_extra`] times.
const BUSY_WAIT_NS: u64 = 2_000;

/// What one native udelay([`BUSY_WAIT_NS`]) takes beyond its length: its
/// first clock read, and the part of the poll that crosses the end. Each
/// call is timed on its own and the median taken, so an interruption (which
/// the profile's noise figures charge apart) does not count; less the one
/// read (`clock_ns`) the timing itself adds between its two stamps.
fn busy_wait_extra(ops: u64, clock_ns: f64) -> f64 {
    let mut took: Vec<u64> = (0..ops.max(1))
        .map(|_| {
            let t0 = Native::now_ns();
            Native::udelay(black_box(BUSY_WAIT_NS));
            Native::now_ns() - t0
        })
        .collect();
    took.sort_unstable();
    (middle(&took) - BUSY_WAIT_NS as f64 - clock_ns).max(0.0)
}

/// The middle one of `sorted` samples, ns (0 for none).
fn middle(sorted: &[u64]) -> f64 {
    sorted.get(sorted.len() / 2).map_or(0.0, |&ns| ns as f64)
}

/// The CPUs in this process's affinity mask, in id order.
fn allowed_cpus() -> Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity(0, ..) fills it for
    // the calling thread and CPU_ISSET only reads within it.
    let cpus: Vec<usize> = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(Error::failed(format!(
                "calibrate: sched_getaffinity: {}",
                std::io::Error::last_os_error()
            )));
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    };
    if cpus.is_empty() {
        return Err(Error::failed("calibrate: this process may run on no CPU"));
    }
    Ok(cpus)
}

/// What two pinned threads share: a start line, a failure flag that stops
/// both, and the time limit.
struct Pair {
    start: Barrier,
    failed: AtomicBool,
    deadline: Instant,
}

impl Pair {
    fn new() -> Pair {
        Pair {
            start: Barrier::new(2),
            failed: AtomicBool::new(false),
            deadline: Instant::now() + TRIAL_TIMEOUT,
        }
    }

    /// Pin the calling thread to `cpu` and wait for the partner; false if
    /// either side could not pin.
    fn ready(&self, cpu: usize) -> bool {
        if pin_current_thread(cpu).is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        self.start.wait();
        !self.failed.load(Ordering::Relaxed)
    }

    /// Whether to give up: the partner failed or time is up (which also
    /// tells the partner).
    fn give_up(&self) -> bool {
        if Instant::now() > self.deadline {
            self.failed.store(true, Ordering::Relaxed);
        }
        self.failed.load(Ordering::Relaxed)
    }

    fn result(&self, what: &str, cpus: (usize, usize), ns: f64) -> Result<f64> {
        if self.failed.load(Ordering::Relaxed) {
            return Err(Error::failed(format!(
                "calibrate: {what} on CPUs {} and {} could not pin both threads or made no progress in {} s",
                cpus.0,
                cpus.1,
                TRIAL_TIMEOUT.as_secs()
            )));
        }
        Ok(ns)
    }
}

/// Half a round trip of one cache line between `cpus`: each thread advances
/// the counter from its own parity with a CAS, so every step moves the line
/// (in modified state) to the other CPU once.
fn pingpong(cpus: (usize, usize), rounds: u64) -> Result<f64> {
    let pair = Pair::new();
    let line = CachePadded::new(AtomicU64::new(0));
    let take_turns = |first: u64| {
        let mut want = first;
        for _ in 0..rounds {
            let mut spins = 0u32;
            while line
                .compare_exchange(want, want + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(1 << 12) && pair.give_up() {
                    return;
                }
            }
            want += 2;
        }
    };
    // Both sides on threads of their own, so the caller's affinity is untouched.
    let ns = std::thread::scope(|s| {
        s.spawn(|| {
            if pair.ready(cpus.1) {
                take_turns(1);
            }
        });
        let first = s.spawn(|| {
            if !pair.ready(cpus.0) {
                return 0.0;
            }
            let t0 = Instant::now();
            take_turns(0);
            per_op(t0.elapsed(), 2 * rounds)
        });
        first.join().unwrap_or(0.0)
    });
    pair.result("ping-pong", cpus, ns)
}

/// A handoff measurement: the mean per handoff, the median and spread of
/// single handoffs, and the median time the giver spent in the wake call.
struct Handoff {
    mean_ns: f64,
    median_ns: f64,
    jitter_ns: f64,
    wake_ns: f64,
}

/// Whether each CPU of a handoff has a thread of its own spinning in user
/// space, so that a wake-up must preempt it (from another CPU: by the
/// reschedule IPI) rather than find the CPU idle.
#[derive(Clone, Copy, PartialEq)]
enum Cpus {
    Idle,
    Busy,
}

/// Spin on the clock, pinned to `cpu`, until `stop`; a failed pin fails `pair`.
fn hog(cpu: usize, pair: &Pair, stop: &AtomicBool) {
    if pin_current_thread(cpu).is_err() {
        pair.failed.store(true, Ordering::Relaxed);
        return;
    }
    while !stop.load(Ordering::Relaxed) {
        black_box(Instant::now());
    }
}

/// One handoff of a token between two threads pinned to `cpus` (the same CPU
/// twice for lat_ctx's case): the giver stores the next turn and unparks the
/// taker (FUTEX_WAKE), then parks (FUTEX_WAIT) until its own turn comes back.
/// Each handoff is also timed on its own, from the giver's store of the time
/// to the taker's clock read once its turn came. With [`Cpus::Busy`] a
/// [`hog`] spins on each CPU meanwhile.
fn handoff(cpus: (usize, usize), rounds: u64, load: Cpus) -> Result<Handoff> {
    let pair = Pair::new();
    let stop = AtomicBool::new(false);
    let turn = CachePadded::new(AtomicU64::new(0));
    let origin = Instant::now();
    let given_at = CachePadded::new(AtomicU64::new(0));
    let now_ns = || origin.elapsed().as_nanos() as u64;
    // Wait for `turn == want`; false if the trial is given up.
    let wait_for = |want: u64| {
        while turn.load(Ordering::Acquire) != want {
            std::thread::park_timeout(Duration::from_millis(100));
            if pair.give_up() {
                return false;
            }
        }
        true
    };
    // Give the token on (`next` is the partner's turn) and wait for `back`;
    // each handoff to this side, timed.
    let play = |me_first: bool, partner: &Thread| {
        let mut took = Vec::with_capacity(rounds as usize);
        let mut wakes = Vec::with_capacity(rounds as usize);
        for i in 0..rounds {
            let (mine, theirs) = if me_first {
                (2 * i, 2 * i + 1)
            } else {
                (2 * i + 1, 2 * i + 2)
            };
            if !wait_for(mine) {
                break;
            }
            if mine > 0 {
                took.push(now_ns().saturating_sub(given_at.load(Ordering::Relaxed)));
            }
            given_at.store(now_ns(), Ordering::Relaxed);
            turn.store(theirs, Ordering::Release);
            let t0 = now_ns();
            partner.unpark();
            wakes.push(now_ns() - t0);
        }
        (took, wakes)
    };
    // Both sides on threads of their own, so the caller's affinity is
    // untouched; the giver leaves its handle here before the start line.
    let giver_thread: OnceLock<Thread> = OnceLock::new();
    let (giver_thread, pair, play, wait_for, stop) =
        (&giver_thread, &pair, &play, &wait_for, &stop);
    let (mean_ns, (mut took, mut wakes)) = std::thread::scope(|s| {
        if load == Cpus::Busy {
            s.spawn(move || hog(cpus.0, pair, stop));
            s.spawn(move || hog(cpus.1, pair, stop));
        }
        let taker = s.spawn(|| {
            if pair.ready(cpus.1)
                && let Some(giver) = giver_thread.get()
            {
                return play(false, giver);
            }
            Default::default()
        });
        let taker_thread = taker.thread().clone();
        let giver = s.spawn(move || {
            let _ = giver_thread.set(std::thread::current());
            if !pair.ready(cpus.0) {
                return Default::default();
            }
            let t0 = Instant::now();
            let played = play(true, &taker_thread);
            // The last token is the taker's: wait until it hands back the final turn.
            wait_for(2 * rounds);
            (per_op(t0.elapsed(), 2 * rounds), played)
        });
        let (mean, (mut took, mut wakes)) = giver.join().unwrap_or_default();
        let (their_took, their_wakes) = taker.join().unwrap_or_default();
        stop.store(true, Ordering::Relaxed);
        took.extend(their_took);
        wakes.extend(their_wakes);
        (mean, (took, wakes))
    });
    let mean_ns = pair.result("futex handoff", cpus, mean_ns)?;
    wakes.sort_unstable();
    took.sort_unstable();
    Ok(Handoff {
        mean_ns,
        median_ns: middle(&took),
        jitter_ns: exp_scale(&took),
        wake_ns: middle(&wakes),
    })
}

/// The scale `b` of the shifted exponential `floor + Exp(b)` whose
/// quartiles those of `sorted` are: their interquartile range over ln 3.
/// Quartiles, not the standard deviation, so that the rare handoff a tick
/// or the host interrupted (milliseconds, which the simulator's own tick
/// and preemption stand for) does not swamp thousands of microsecond ones.
fn exp_scale(sorted: &[u64]) -> f64 {
    if sorted.len() < 4 {
        return 0.0;
    }
    let q = |p: usize| sorted[sorted.len() * p / 4] as f64;
    (q(3) - q(1)) / 3f64.ln()
}

/// The native world of a model and the ancestor's pages, which the whole
/// family maps: their reclaim visits every vma of the family. Each unmap
/// starts after the rest of the world has been through the caches
/// ([`Evictor`]): a storm meets too few unmaps of such pages to time them
/// where they happen, as the walks are ([`storm_walk`]). Cold is an upper
/// bound: on a 2-CPU Xeon VM (4 MiB L2, 260 MiB L3 by sysfs) the same
/// eviction made a page_referenced walk 526 ns a vma where the storm's own
/// long walks took 363 ns.
struct Walker {
    world: World,
    pages: Vec<PageId>,
    vmas: u32,
}

impl Walker {
    fn new(spec: &WorldSpec) -> Result<Walker> {
        let world = World::build(spec);
        let page = world
            .page_tables
            .pte(MmId(0), 0)
            .and_then(|p| pte::load(p).page())
            .ok_or_else(|| {
                Error::usage(
                    "calibrate: the model's first task maps no anonymous page at address 0 to walk (allowed: a model with world.anon_vmas >= 1)",
                )
            })?;
        let vmas = world.page_referenced(page).vmas_visited.max(1);
        let pages = (0..world.page_tables.va_pages())
            .filter_map(|a| pte::load(world.page_tables.pte(MmId(0), a)?).page())
            .filter(|&p| world.page_referenced(p).vmas_visited == vmas)
            .collect();
        Ok(Walker { world, pages, vmas })
    }

    /// Reclaim the first `n` pages once each; ns per vma unmapped. An
    /// unmapped page stays unmapped, so each trial needs a world of its own.
    fn ns_per_vma_unmapped(self, n: u64, cold: &mut Evictor) -> f64 {
        let pages = self.pages.iter().take(n as usize);
        cold_per_vma(pages, cold, |p| self.world.reclaim(p).vmas_visited)
    }
}

/// How long each trial runs the model's storm: a second holds some hundred
/// long walks of aim7-fork-storm on 2 CPUs (its first pass over the
/// ancestor's pages alone takes a good part of it). Never shortened, not
/// even by `--quick`: in that first pass the touch role all but stops (on a
/// 2-CPU Xeon VM, from 2 to 4,600 touches of 20 us to 250 ms each in the first
/// 50-250 ms, against some 400,000 of 270 ns in a whole second), so a short
/// storm's median touch times the start-up, not the storm.
const STORM_SPAN: Duration = Duration::from_secs(1);

/// How long a storm trial on `cpus` CPUs runs: [`STORM_SPAN`], doubled on
/// one CPU, where the start-up's CPU time takes twice as long to pass (a
/// crosscheck's one-CPU storm on the 2-vCPU EPYC VM, 2026-12-06, ended a
/// 1 s trial with 100 touches done).
fn storm_span(cpus: usize) -> Duration {
    if cpus >= 2 {
        STORM_SPAN
    } else {
        2 * STORM_SPAN
    }
}

/// Fewest touches of mapped pages a storm trial takes a touch's time from:
/// a storm that made fewer was still in its start-up (see [`STORM_SPAN`]).
const MIN_TOUCHES: u64 = 1_000;

/// How many times a storm trial is run before its failure counts: one that
/// ended still in its start-up (too few touches, no long walk yet) says
/// nothing about the machine, but one that cannot leave it in this many
/// tries is not the machine's noise.
const STORM_TRIES: usize = 3;

/// `trial`'s first success in [`STORM_TRIES`] tries, or its last failure.
fn settled_storm_trial<T>(mut trial: impl FnMut() -> Result<T>) -> Result<T> {
    let mut last = trial();
    for _ in 1..STORM_TRIES {
        if last.is_ok() {
            break;
        }
        last = trial();
    }
    last
}

/// What one trial of the model's storm measured.
struct StormTrial {
    /// CPU time per vma of its long walks.
    visit_ns: f64,
    /// How many long walks it timed.
    walks: u64,
    /// Its mean walk of one vma (CPU time, the clock's share in it) and
    /// how many it timed; None if it walked no such page.
    one_vma: Option<(f64, u64)>,
    /// Its mean touch of a mapped page ([`TouchProbe`], one clock read
    /// included).
    touch_ns: f64,
    /// Its median fork and exit (CPU time, two timings' share in it) and
    /// how many it timed; None if the model has no fork-exit thread or
    /// none finished one.
    fork: Option<(f64, u64)>,
}

/// The model's own native storm for `span`, its threads pinned round robin
/// to `cpus` as `run --pin` pins them, the rmap locks and the mmap_locks
/// rw_semaphores (the anon_vma lock since v3.1): the CPU time per vma of
/// its walks of `long` vmas or more ([`WalkProbe`]), and its touch role's
/// mean touch of a mapped page ([`TouchProbe`]; the model has touch
/// threads: [`measure`] checks). A trial with no such walk, or too few
/// such touches, fails and says so.
fn storm_trial(
    model: &Model,
    base: &MachineProfile,
    cpus: &[usize],
    span: Duration,
    long: u32,
) -> Result<StormTrial> {
    let pin = CpuList::allowed(cpus);
    let storm = ProbedStorm {
        model,
        base,
        pin: &pin,
        span,
        probe: WalkProbe::new(thread_cpu_ns, long),
    };
    let Probed {
        visit,
        walks,
        one_vma,
        fork,
        touch,
    } = LockKind::Rwsem.dispatch::<Native, _>(storm);
    let Some(visit_ns) = visit else {
        return Err(Error::failed(format!(
            "calibrate: the model's native storm walked no page mapped by {long} vmas or more in {span:?} (a page its first task's whole family maps)"
        )));
    };
    let (touch_ns, touches) = touch.unwrap_or((0.0, 0));
    if touches < MIN_TOUCHES {
        return Err(Error::failed(format!(
            "calibrate: the model's native storm's touch threads touched {touches} mapped pages in {span:?} without a direct reclaim, too few to time a touch by (at least {MIN_TOUCHES})"
        )));
    }
    Ok(StormTrial {
        visit_ns,
        walks,
        one_vma,
        touch_ns,
        fork,
    })
}

/// What a probed storm measured: [`WalkProbe`]'s figures, [`ForkProbe`]'s
/// and [`TouchProbe`]'s.
struct Probed {
    visit: Option<f64>,
    walks: u64,
    one_vma: Option<(f64, u64)>,
    fork: Option<(f64, u64)>,
    touch: Option<(f64, u64)>,
}

/// One probed run of a model's storm, for [`LockKind::dispatch`], its walks
/// timed by `probe` and its forks by a [`ForkProbe`] on the same clock.
struct ProbedStorm<'a> {
    model: &'a Model,
    base: &'a MachineProfile,
    pin: &'a CpuList,
    span: Duration,
    probe: WalkProbe,
}

impl LockVisitor for ProbedStorm<'_> {
    type Output = Probed;

    fn visit<L: RawRwLock + KindInfo>(self) -> Self::Output {
        let costs = Costs::of(&self.base.work);
        let ctx = Ctx::<L>::build(self.model, LockKind::Rwsem, costs, online_cpus())
            .with_walk_probe(self.probe)
            .with_fork_probe(ForkProbe::new(thread_cpu_ns))
            .with_touch_probe(TouchProbe::new(Native::now_ns));
        let ctx = Arc::new(ctx);
        storm::run(
            ctx.clone(),
            self.span,
            Some(self.pin),
            self.model.world.seed,
        );
        // Read through the context, not out of it: a worker marks itself
        // finished before its thread lets go of the context.
        let probe = ctx.walk_probe.as_ref().expect("probed above");
        let forks = ctx.fork_probe.as_ref().expect("probed above");
        let touches = ctx.touch_probe.as_ref().expect("probed above");
        Probed {
            visit: probe.ns_per_vma(),
            walks: probe.walks(),
            one_vma: probe.one_vma_mean(),
            fork: forks.median(),
            touch: touches.mean(),
        }
    }
}

/// `cpus` as "CPU 0, 1".
pub fn cpu_list(cpus: &[usize]) -> String {
    let ids: Vec<String> = cpus.iter().map(usize::to_string).collect();
    format!("CPU {}", ids.join(", "))
}

/// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), ns: what a walk cost
/// on a CPU, its time switched out left out.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec handed to it.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Two reads of this thread's CPU clock in a row, the median of `ops`
/// pairs, ns: what the timing adds to a walk it times (the first read's
/// return and the second's entry).
fn cpu_clock_gap(ops: u64) -> f64 {
    let mut gaps: Vec<u64> = (0..ops.max(1))
        .map(|_| {
            let t = thread_cpu_ns();
            thread_cpu_ns().saturating_sub(t)
        })
        .collect();
    gaps.sort_unstable();
    middle(&gaps)
}

/// `walk` of each of `pages` from cold caches, only the walks timed; ns
/// per vma the walks visited.
fn cold_per_vma<'p>(
    pages: impl Iterator<Item = &'p PageId>,
    cold: &mut Evictor,
    walk: impl Fn(PageId) -> u32,
) -> f64 {
    let (mut vmas, mut took) = (0u64, Duration::ZERO);
    for &page in pages {
        cold.evict();
        let t0 = Instant::now();
        vmas += u64::from(walk(black_box(page)));
        took += t0.elapsed();
    }
    per_op(took, vmas.max(1))
}

/// Pushes a walk's lines out of the caches by writing one byte of every line
/// of a buffer: as large as the world, at most the last-level cache
/// (sysfs's largest cache of CPU 0, taken as 64 MiB to 1 GiB; 64 MiB if it
/// says nothing). A world larger than that cache leaves every walk cold.
struct Evictor {
    lines: Vec<u8>,
}

impl Evictor {
    const LINE: usize = 64;

    /// For a world of `world_bytes`.
    fn new(world_bytes: usize) -> Evictor {
        Evictor {
            lines: vec![0; Self::bytes(world_bytes, last_level_cache_bytes())],
        }
    }

    /// What it writes for a world of `world_bytes` and a last-level cache of
    /// `llc` bytes (None: sysfs did not say).
    fn bytes(world_bytes: usize, llc: Option<usize>) -> usize {
        let llc = llc.unwrap_or(64 << 20).clamp(64 << 20, 1 << 30);
        world_bytes.clamp(Self::LINE, llc)
    }

    fn evict(&mut self) {
        for i in (0..self.lines.len()).step_by(Self::LINE) {
            self.lines[i] = self.lines[i].wrapping_add(1);
        }
        black_box(&self.lines);
    }
}

/// The largest cache sysfs lists for CPU 0 ("491520K"), in bytes.
fn last_level_cache_bytes() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("size")).ok())
        .filter_map(|size| parse_cache_size(size.trim()))
        .max()
}

/// "48K", "2048K", "32M" in bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let shift = match unit {
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    digits.parse::<usize>().ok().map(|n| n << shift)
}

/// Isolate batches of [`SWAP_CLUSTER_MAX`] pages off `world`'s inactive
/// list and put each back, until about `moves` pages moved; ns per page
/// moved. Put back old, a page goes to the list's head, so the batches go
/// round the whole list as a reclaim scan does.
fn lru_moves(world: &mut World, moves: u64) -> Result<f64> {
    let batches = moves.div_ceil(2 * SWAP_CLUSTER_MAX as u64);
    let mut moved = 0u64;
    let t0 = Instant::now();
    for _ in 0..batches {
        let batch = world
            .lru
            .isolate_pinned(&world.pages, List::Inactive, SWAP_CLUSTER_MAX);
        for &page in &batch {
            world
                .lru
                .putback_from(&world.pages, page, List::Inactive, Verdict::Old);
            world.pages.unpin(page);
        }
        moved += 2 * batch.len() as u64;
    }
    if moved == 0 {
        return Err(Error::usage(
            "calibrate: the model's world has no page on its inactive list to move (allowed: a model whose tasks map anonymous or file pages)",
        ));
    }
    Ok(per_op(t0.elapsed(), moved))
}

/// Fork a child of `world`'s first task and exit it, `cycles` times; ns per
/// cycle and the work one cycle did (every cycle does the same).
fn fork_exit(world: &mut World, cycles: u64) -> Result<(f64, WorkTally)> {
    let parent = world.live_mms().next().map(|(mm, _)| mm).ok_or_else(|| {
        Error::usage("calibrate: the model's world has no task to fork (allowed: world.tasks >= 1)")
    })?;
    let before = world.work;
    let t0 = Instant::now();
    for _ in 0..cycles {
        let child = world.fork(black_box(parent));
        world.exit(child);
    }
    let elapsed = t0.elapsed();
    let n = cycles.max(1);
    let per_cycle = WorkTally {
        vmas: (world.work.vmas - before.vmas) / n,
        avcs: (world.work.avcs - before.avcs) / n,
        ptes: (world.work.ptes - before.ptes) / n,
    };
    Ok((per_op(elapsed, n), per_cycle))
}

/// `calls` grace periods waited in turn, as percpu-rwsem's writer waits
/// one in rcu_sync_enter: ns per synchronize_rcu().
fn grace_period(calls: u64) -> f64 {
    let t0 = Instant::now();
    for _ in 0..calls {
        Native::synchronize_rcu();
    }
    per_op(t0.elapsed(), calls.max(1))
}

/// A measured value as a profile stores it: 0.1 ns resolution.
fn round(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}

impl Calibration {
    /// How the walks were made cold, for their notes.
    pub fn after_eviction(&self) -> String {
        let mib = self.evicted_bytes as f64 / f64::from(1 << 20);
        format!("each after writing {mib:.1} MiB (the world's bytes, at most the last-level cache)")
    }

    /// A profile of this machine: the measured keys from these figures, every
    /// other key from `base`; and for each key the note saying which it is.
    ///
    /// Derived keys: `ctx_switch_ns` and `wakeup_ns` split the one-CPU handoff
    /// (less its two syscalls, the wake and the wait) evenly, as the default
    /// profile splits perf's pipe benchmark; `wakeup_idle_ns` is the two-CPU
    /// handoff less the waker's syscall.
    pub fn profile(
        &self,
        base: &MachineProfile,
        base_name: &str,
    ) -> (MachineProfile, BTreeMap<String, String>) {
        let mut p = base.clone();
        let mut notes = BTreeMap::new();
        let copied = format!("copied from {base_name} (not measured)");
        for (key, _) in base.costs() {
            notes.insert(key, copied.clone());
        }
        notes.insert("cache.line_service".into(), copied);
        let n = self.cpus.len() as u32;
        p.name = format!(
            "this machine: {} ({n} CPUs), by rmap-storm calibrate",
            cpu_model()
        );
        notes.insert("name".into(), String::new());
        p.topology.sockets = 1;
        p.topology.dies_per_socket = 1;
        p.topology.cores_per_die = n;
        p.topology.threads_per_core = 1;
        for key in ["sockets", "dies_per_socket", "threads_per_core"] {
            notes.insert(
                format!("topology.{key}"),
                "the online CPUs as one die".into(),
            );
        }
        notes.insert(
            "topology.cores_per_die".into(),
            "online CPUs this process may use; SMT siblings are not told apart".into(),
        );
        let syscall = self.syscall.median();
        let one_cpu = ((self.handoff_one_cpu.median() - 2.0 * syscall) / 2.0).max(0.0);
        let mut set = |key: &str, ns: f64, how: String| {
            *p.cost_mut(key).expect("a profile key") = round(ns);
            notes.insert(key.to_string(), how);
        };
        set(
            "cache.atomic_ns",
            self.atomic.median(),
            spread(&self.atomic, "fetch_add loop"),
        );
        set(
            "cache.pause_ns",
            self.pause.median(),
            spread(&self.pause, "spin_loop loop"),
        );
        set(
            "work.syscall_ns",
            syscall,
            spread(&self.syscall, "getppid loop"),
        );
        set(
            "work.clock_ns",
            self.clock.median(),
            spread(&self.clock, "Instant::now loop"),
        );
        set(
            "work.busy_wait_extra_ns",
            self.busy_wait_extra.median(),
            spread(
                &self.busy_wait_extra,
                "single udelay(2 us) calls (a spin on the clock), the median less 2 us and one clock read",
            ),
        );
        set(
            "sched.yield_ns",
            self.sched_yield.median(),
            spread(
                &self.sched_yield,
                "sched_yield loop on one CPU with nothing else to run",
            ),
        );
        set(
            "sched.park_cold_ns",
            self.park_cold.median().max(0.0),
            spread(
                &self.park_cold,
                "parking_lot_core park and unpark on one CPU, call to callback, after a 5 us sleep less at once after: the two means' differences (calls under 16 us), averaged",
            ),
        );
        if let Some(f) = &self.pingpong {
            set("cache.die_ns", f.median(), pingpong_note(f));
        }
        let how = spread(
            &self.handoff_one_cpu,
            "futex handoff on one CPU; half of it less 2 syscalls",
        );
        set("sched.ctx_switch_ns", one_cpu, how.clone());
        set("sched.wakeup_ns", one_cpu, how);
        let how = spread(
            &self.jitter,
            "single futex handoffs on one CPU, interquartile range / ln 3; over sqrt 2, split between the wake-up and the switch like the handoff (variances add)",
        );
        set("sched.jitter_ns", self.jitter.median() / 2f64.sqrt(), how);
        let what = "clock-reading loop on one CPU, gaps over 2 us";
        set(
            "sched.noise_interval_ns",
            self.noise_interval.median(),
            spread(
                &self.noise_interval,
                &format!("{what}: uninterrupted time per gap"),
            ),
        );
        set(
            "sched.noise_ns",
            self.noise.median(),
            spread(&self.noise, &format!("{what}: their mean length")),
        );
        if let Some(f) = &self.handoff_two_cpus {
            let how = spread(f, "futex handoff across 2 CPUs; less 1 syscall");
            set("sched.wakeup_idle_ns", (f.median() - syscall).max(0.0), how);
        }
        if let Some(f) = &self.wake_remote {
            let how = spread(
                f,
                "in that handoff, the waker's Thread::unpark (FUTEX_WAKE) of the thread parked on the other, idle CPU",
            );
            set("sched.wakeup_ipi_ns", f.median(), how);
        }
        if let Some(f) = &self.handoff_busy {
            let how = spread(
                f,
                "single futex handoffs across 2 CPUs, each CPU busy with a thread spinning in user space that the wakee preempts: the median, less 1 syscall and the switch (ctx_switch_ns)",
            );
            let ns = f.median() - syscall - one_cpu;
            set("sched.resched_ipi_ns", ns.max(0.0), how);
        }
        let what = format!(
            "CPU time per vma of the model's native storm's page_referenced walks of >= {} vmas ({} walks in all), {:?} a trial pinned to {}",
            self.storm_min_vmas,
            self.storm_walks,
            self.storm_span,
            cpu_list(&self.storm_cpus)
        );
        set(
            "work.vma_visit_ns",
            self.walk.median(),
            spread(&self.walk, &what),
        );
        if let Some(f) = &self.walk_start {
            let what = format!(
                "the model's native storm's page_referenced walks of one vma ({} in all): their mean CPU time (those over 16 us, an interrupt's, left out), less two reads of the CPU clock in a row ({:.1} ns), the trial's vma visit and the rw_semaphore's two atomics (the simulator's line model charges a lock's own accesses)",
                self.one_vma_walks,
                self.cpu_clock.median()
            );
            set("work.walk_ns", f.median(), spread(f, &what));
        }
        set(
            "work.lru_page_ns",
            self.lru.median(),
            spread(
                &self.lru,
                "native isolate and putback of 32-page batches, per page moved",
            ),
        );
        let w = self.fork_work;
        let base_cycle = w.vmas as f64 * base.work.vma_ns
            + w.avcs as f64 * base.work.avc_ns
            + w.ptes as f64 * base.work.pte_copy_ns;
        if base_cycle > 0.0 {
            let (fork, timed) = match &self.storm_fork {
                Some(f) => (f, format!(
                    "the fork-exit role's fork and exit in the model's native storm ({} timed): the median CPU time, less two reads of the CPU clock in a row, taken to do the work of the loop's fork of the first task",
                    self.storm_forks
                )),
                None => (&self.fork, "native fork and exit of the model's first task in a loop (the storm forks none)".to_string()),
            };
            let scale = fork.median() / base_cycle;
            let how = spread(
                fork,
                &format!(
                    "{timed} ({} vmas, {} AVCs, {} PTEs copied and freed); {base_name}'s figure x {scale:.3}, the three scaled together",
                    w.vmas, w.avcs, w.ptes
                ),
            );
            set("work.vma_ns", base.work.vma_ns * scale, how.clone());
            set("work.avc_ns", base.work.avc_ns * scale, how.clone());
            set("work.pte_copy_ns", base.work.pte_copy_ns * scale, how);
        }
        let what = format!(
            "native reclaim of a page, {} ({} vmas per try_to_unmap)",
            self.after_eviction(),
            self.walk_vmas
        );
        set(
            "work.unmap_pte_ns",
            self.unmap.median(),
            spread(&self.unmap, &what),
        );
        set(
            "work.rcu_gp_ns",
            self.grace_period.median(),
            spread(
                &self.grace_period,
                "the native platform's synchronize_rcu (membarrier(MEMBARRIER_CMD_GLOBAL), or its fallback sleep where refused), in turn",
            ),
        );
        set(
            "work.touch_ns",
            self.touch.median(),
            spread(
                &self.touch,
                "the touch role's touches of mapped pages without a direct reclaim in the model's native storm (as the walks): their mean time (those over 16 us, an interrupt's, left out), less one clock read",
            ),
        );
        self.scheduler(&mut p, &mut notes);
        (p, notes)
    }

    /// `sched.policy` and its tunables from the kernel release: EEVDF from
    /// 6.6, CFS before; each tunable its default for this many CPUs. An
    /// unreadable release keeps the base profile's.
    fn scheduler(&self, p: &mut MachineProfile, notes: &mut BTreeMap<String, String>) {
        let Some(release) = &self.kernel else {
            return;
        };
        let Some(version) = kernel_version(release) else {
            return;
        };
        let eevdf = version >= (6, 6);
        let cpus = self.cpus.len().clamp(1, 8) as u32;
        let factor = f64::from(1 + cpus.ilog2());
        p.sched.policy = if eevdf {
            SchedPolicy::Eevdf
        } else {
            SchedPolicy::Cfs
        };
        let which = if eevdf {
            "EEVDF (6.6 on)"
        } else {
            "CFS (before 6.6)"
        };
        notes.insert(
            "sched.policy".into(),
            format!("this kernel ({release}, /proc/sys/kernel/osrelease) runs {which}"),
        );
        // EEVDF's request: 0.75 ms until 6.15 (and 6.12.y before its
        // backport), 0.70 ms since (2ae891b82695, "sched: Reduce the default
        // slice to avoid tasks getting an extra tick").
        let slice_ms = if version >= (6, 15) { 0.70 } else { 0.75 };
        let tunables = [
            (
                "sched.base_slice_ns",
                "sysctl_sched_base_slice",
                slice_ms * 1e6,
                eevdf,
            ),
            (
                "sched.sched_latency_ns",
                "sysctl_sched_latency",
                6_000_000.0,
                !eevdf,
            ),
            (
                "sched.min_granularity_ns",
                "sysctl_sched_min_granularity",
                750_000.0,
                !eevdf,
            ),
            (
                "sched.wakeup_granularity_ns",
                "sysctl_sched_wakeup_granularity",
                1_000_000.0,
                !eevdf,
            ),
        ];
        for (key, sysctl, ns, used) in tunables {
            *p.cost_mut(key).expect("a profile key") = ns * factor;
            let unused = if used {
                ""
            } else {
                "; unused by this kernel's scheduler"
            };
            notes.insert(
                key.into(),
                format!(
                    "derived: kernel/sched/fair.c's default {sysctl} {} ms x (1 + ilog2(min({} CPUs, 8))){unused}",
                    ns / 1e6,
                    self.cpus.len()
                ),
            );
        }
        if let Some(ns) = self.base_slice_ns.filter(|_| eevdf) {
            p.sched.base_slice_ns = ns;
            notes.insert(
                "sched.base_slice_ns".into(),
                format!("read: the running kernel's .sysctl_sched_base_slice in {SCHED_DEBUG}"),
            );
        }
    }
}

/// The scheduler's debug file (debugfs, root only), which prints the tunables
/// in effect.
const SCHED_DEBUG: &str = "/sys/kernel/debug/sched/debug";

/// `.sysctl_sched_base_slice : 1.400000` (ms) from the debug file's text.
fn base_slice_in(debug: &str) -> Option<f64> {
    let line = debug
        .lines()
        .find(|l| l.trim_start().starts_with(".sysctl_sched_base_slice"))?;
    let ms: f64 = line.split(':').nth(1)?.trim().parse().ok()?;
    (ms.is_finite() && ms > 0.0).then_some(ms * 1e6)
}

/// (major, minor) of a kernel release such as `6.18.44-fc-v1045`.
fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Less than any two cores take to move a line: the fastest pair in
/// nviennot/core-to-core-latency's README (CAS ping-pong, half round trip,
/// medians) is a Ryzen 9 5950X within a CCX, 17 ns, then client Intel
/// parts at 20-21 ns; SMT siblings share their core's L1 and answer in
/// about 7 ns (a Xeon Gold 6242, the same source).
const MIN_CORE_TRANSFER_NS: f64 = 15.0;

/// The ping-pong's note, flagged when the two CPUs answered faster than
/// two cores can: they were SMT siblings, or the host ran both vCPUs on
/// one core, for those trials. The figure is kept as measured; the flag
/// tells the reader of the profile why it is so low.
fn pingpong_note(f: &Figure) -> String {
    let how = spread(f, "CAS ping-pong, half round trip");
    if f.median() < MIN_CORE_TRANSFER_NS {
        format!(
            "{how}; under {MIN_CORE_TRANSFER_NS} ns, faster than any two cores: these CPUs answered as one core's SMT siblings"
        )
    } else {
        how
    }
}

/// "measured: median of 7 trials, 71.2..80.3 ns: getppid loop".
fn spread(f: &Figure, what: &str) -> String {
    format!(
        "measured: median of {} trials, {:.1}..{:.1} ns: {what}",
        f.trials_ns.len(),
        f.min(),
        f.max()
    )
}

/// The CPU's model name from /proc/cpuinfo, or "unknown CPU".
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5.2 ns (a row profile of 2026-12-07 on the 2-vCPU VM) is flagged;
    /// 60 ns, the usual figure there, is not.
    #[test]
    fn a_pingpong_faster_than_two_cores_can_is_flagged() {
        let flagged = |ns: f64| {
            pingpong_note(&Figure {
                trials_ns: vec![ns; 3],
            })
            .contains("SMT siblings")
        };
        assert!(flagged(5.2), "5.2 ns was not flagged");
        assert!(!flagged(60.8), "60.8 ns was flagged");
    }

    #[test]
    fn median_min_max_of_trials() {
        let f = Figure {
            trials_ns: vec![5.0, 1.0, 3.0],
        };
        assert_eq!((f.median(), f.min(), f.max()), (3.0, 1.0, 5.0));
        let even = Figure {
            trials_ns: vec![4.0, 1.0, 2.0, 10.0],
        };
        assert_eq!(even.median(), 3.0);
    }

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("48K"), Some(48 << 10));
        assert_eq!(parse_cache_size("491520K"), Some(480 << 20));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("12"), None);
        assert_eq!(parse_cache_size("1T"), None);
    }

    #[test]
    fn the_evictor_writes_the_world_at_most_the_last_level_cache() {
        let mib = 1 << 20;
        let llc = Some(480 * mib);
        assert_eq!(Evictor::bytes(61 * mib, llc), 61 * mib, "a world that fits");
        assert_eq!(
            Evictor::bytes(900 * mib, llc),
            480 * mib,
            "a world that does not"
        );
        assert_eq!(Evictor::bytes(900 * mib, None), 64 * mib, "no sysfs figure");
        assert_eq!(Evictor::bytes(0, llc), Evictor::LINE, "at least one line");
    }

    #[test]
    fn a_storm_trial_is_tried_until_it_settles_three_times_at_most() {
        let mut runs = 0;
        let got = settled_storm_trial(|| {
            runs += 1;
            if runs < 3 {
                Err(Error::failed("start-up"))
            } else {
                Ok(runs)
            }
        });
        assert_eq!(got.ok(), Some(3));
        let mut runs = 0;
        let got: Result<()> = settled_storm_trial(|| {
            runs += 1;
            Err(Error::failed(format!("start-up {runs}")))
        });
        assert_eq!(runs, STORM_TRIES);
        assert!(got.unwrap_err().to_string().contains("start-up 3"));
        assert_eq!(middle(&[]), 0.0);
        assert_eq!(middle(&[1, 5, 9, 10]), 9.0);
    }

    #[test]
    fn a_storm_on_one_cpu_runs_twice_as_long() {
        assert_eq!(storm_span(1), 2 * STORM_SPAN);
        assert_eq!(storm_span(2), STORM_SPAN);
        assert_eq!(storm_span(64), STORM_SPAN);
    }

    #[test]
    fn quick_plans_do_a_twentieth() {
        let quick = Plan {
            trials: 1,
            quick: true,
            storm_cpus: None,
        };
        assert_eq!(quick.ops(2_000), 100);
        assert_eq!(quick.ops(5), 1);
        assert_eq!(
            Plan {
                quick: false,
                ..quick
            }
            .ops(2_000),
            2_000
        );
    }

    fn figure(ns: f64) -> Figure {
        Figure {
            trials_ns: vec![ns - 1.0, ns, ns + 1.0],
        }
    }

    #[test]
    fn profile_takes_measured_keys_and_copies_the_rest() {
        let base = crate::model::machine::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/machines/default.toml"),
        )
        .unwrap();
        let cal = Calibration {
            cpus: vec![0, 1, 2],
            atomic: figure(7.0),
            pause: figure(30.0),
            syscall: figure(100.0),
            clock: figure(50.0),
            busy_wait_extra: figure(120.0),
            sched_yield: figure(300.0),
            park_cold: figure(60.0),
            pingpong: Some(figure(40.0)),
            handoff_one_cpu: figure(2200.0),
            jitter: figure(250.0),
            handoff_two_cpus: None,
            wake_remote: None,
            handoff_busy: Some(figure(12_300.0)),
            noise_interval: figure(800_000.0),
            noise: figure(20_000.0),
            walk: figure(12.0),
            walk_start: Some(figure(250.0)),
            one_vma_walks: 90_000,
            cpu_clock: figure(180.0),
            unmap: figure(30.0),
            lru: figure(20.0),
            fork: figure(10_000.0),
            fork_work: WorkTally {
                vmas: 10,
                avcs: 20,
                ptes: 100,
            },
            storm_fork: Some(figure(14_500.0)),
            storm_forks: 900,
            touch: figure(90.0),
            grace_period: figure(8_000_000.0),
            walk_vmas: 10_001,
            storm_walks: 700,
            storm_cpus: vec![0, 1, 2],
            storm_min_vmas: 5_001,
            storm_span: Duration::from_secs(1),
            evicted_bytes: 64 << 20,
            kernel: Some("6.18.44-fc-v1045".into()),
            base_slice_ns: None,
        };
        let (p, notes) = cal.profile(&base, "base.toml");
        assert_eq!(p.topology.cpus(), 3);
        assert_eq!(p.cache.atomic_ns, 7.0);
        assert_eq!(p.cache.die_ns, 40.0);
        // (2200 - 2 x 100) / 2
        assert_eq!((p.sched.ctx_switch_ns, p.sched.wakeup_ns), (1000.0, 1000.0));
        // 12,300 - 100 - 1000
        assert_eq!(p.sched.resched_ipi_ns, 11_200.0);
        assert_eq!(
            p.sched.jitter_ns,
            (250.0 / 2f64.sqrt() * 10.0).round() / 10.0
        );
        assert_eq!(
            (p.sched.noise_interval_ns, p.sched.noise_ns),
            (800_000.0, 20_000.0)
        );
        assert_eq!(p.work.vma_visit_ns, 12.0);
        assert_eq!(p.work.walk_ns, 250.0);
        assert_eq!(p.work.unmap_pte_ns, 30.0);
        assert_eq!(p.work.lru_page_ns, 20.0);
        assert_eq!(p.work.touch_ns, 90.0);
        assert_eq!(p.work.rcu_gp_ns, 8_000_000.0);
        assert_eq!((p.work.clock_ns, p.work.busy_wait_extra_ns), (50.0, 120.0));
        assert_eq!(p.sched.yield_ns, 300.0);
        assert_eq!(p.sched.park_cold_ns, 60.0);
        // The storm's 14,500 ns over 10 x 300 + 20 x 300 + 100 x 55 =
        // 14,500 ns at the base's prices: each price x 1.
        assert_eq!(
            (p.work.vma_ns, p.work.avc_ns, p.work.pte_copy_ns),
            (300.0, 300.0, 55.0)
        );
        assert!(notes["work.avc_ns"].contains("in the model's native storm (900 timed)"));
        // Not measured: copied, and the note says so.
        assert_eq!(p.sched.wakeup_idle_ns, base.sched.wakeup_idle_ns);
        assert_eq!(p.cache.memory_ns, base.cache.memory_ns);
        assert!(notes["sched.wakeup_idle_ns"].starts_with("copied from base.toml"));
        assert!(notes["cache.atomic_ns"].starts_with("measured: median of 3 trials"));
        // Every cost has a note.
        assert!(p.costs().iter().all(|(k, _)| notes.contains_key(k)));
        // 6.18 runs EEVDF: 0.70 ms x (1 + ilog2(3)) = 1.4 ms; CFS's keys
        // at their defaults too, marked unused.
        assert_eq!(p.sched.policy, SchedPolicy::Eevdf);
        assert_eq!(p.sched.base_slice_ns, 1_400_000.0);
        assert_eq!(p.sched.sched_latency_ns, 12_000_000.0);
        assert!(notes["sched.policy"].contains("6.18.44-fc-v1045"));
        assert!(
            notes["sched.wakeup_granularity_ns"].ends_with("unused by this kernel's scheduler")
        );
        // The running kernel's slice, when read, wins over the release's.
        let read = Calibration {
            base_slice_ns: Some(2_100_000.0),
            ..cal.clone()
        };
        let (p, notes) = read.profile(&base, "base.toml");
        assert_eq!(p.sched.base_slice_ns, 2_100_000.0);
        assert!(notes["sched.base_slice_ns"].starts_with("read: "));
        // A storm that forked nothing: the loop's 10,000 ns, each price x 0.690.
        let unforked = Calibration {
            storm_fork: None,
            ..cal.clone()
        };
        let (p, notes) = unforked.profile(&base, "base.toml");
        assert_eq!(
            (p.work.vma_ns, p.work.avc_ns, p.work.pte_copy_ns),
            (206.9, 206.9, 37.9)
        );
        assert!(notes["work.avc_ns"].contains("in a loop (the storm forks none)"));
        // A storm that walked no page of one vma measures no walk start.
        let unwalked = Calibration {
            walk_start: None,
            ..cal.clone()
        };
        let (p, notes) = unwalked.profile(&base, "base.toml");
        assert_eq!(p.work.walk_ns, base.work.walk_ns);
        assert!(notes["work.walk_ns"].starts_with("copied from base.toml"));
        // 6.14 still had 0.75 ms: 1.5 ms on 3 CPUs.
        let older = Calibration {
            kernel: Some("6.14.2".into()),
            ..cal.clone()
        };
        assert_eq!(
            older.profile(&base, "base.toml").0.sched.base_slice_ns,
            1_500_000.0
        );
        let cfs = Calibration {
            kernel: Some("6.5.0".into()),
            ..cal
        };
        assert_eq!(
            cfs.profile(&base, "base.toml").0.sched.policy,
            SchedPolicy::Cfs
        );
        let unknown = Calibration {
            kernel: None,
            ..cfs
        };
        let kept = unknown.profile(&base, "base.toml").0.sched;
        assert_eq!(
            (kept.policy, kept.base_slice_ns),
            (base.sched.policy, base.sched.base_slice_ns)
        );
    }

    #[test]
    fn kernel_versions_read_major_and_minor() {
        assert_eq!(kernel_version("6.18.44-fc-v1045"), Some((6, 18)));
        assert_eq!(kernel_version("2.6.32-754.el6.x86_64"), Some((2, 6)));
        assert_eq!(kernel_version("6.6-rc1"), Some((6, 6)));
        assert_eq!(kernel_version("linux"), None);
    }

    #[test]
    fn the_base_slice_is_read_from_the_scheduler_debug_file() {
        let debug = "sysctl_sched\n  .sysctl_sched_base_slice                 : 1.400000\n  .sysctl_sched_features                   : 99674079\n";
        assert_eq!(base_slice_in(debug), Some(1_400_000.0));
        assert_eq!(base_slice_in("sysctl_sched\n"), None);
        assert_eq!(base_slice_in("  .sysctl_sched_base_slice : -1\n"), None);
    }

    #[test]
    fn pingpong_and_handoff_finish_on_the_first_cpu() {
        // On one CPU the two threads can only take turns by preemption or
        // parking; the handoff must still finish (no lost wakeup).
        let cpu = allowed_cpus().unwrap()[0];
        let one = handoff((cpu, cpu), 50, Cpus::Idle).unwrap();
        assert!(one.mean_ns > 0.0 && one.jitter_ns.is_finite() && one.jitter_ns >= 0.0);
        let cpus = allowed_cpus().unwrap();
        if cpus.len() >= 2 {
            assert!(pingpong((cpus[0], cpus[1]), 1_000).unwrap() > 0.0);
            assert!(handoff((cpus[0], cpus[1]), 50, Cpus::Idle).unwrap().mean_ns > 0.0);
            let busy = handoff((cpus[0], cpus[1]), 50, Cpus::Busy).unwrap();
            assert!(busy.median_ns > 0.0 && busy.median_ns.is_finite());
        }
    }

    #[test]
    fn noise_counts_gaps_within_the_loop() {
        // 10 ms: the quiet time per gap lies within the span, and a gap
        // counted is longer than the threshold.
        let n = noise(allowed_cpus().unwrap()[0], 10_000_000).unwrap();
        assert!(n.interval_ns > 0.0 && n.interval_ns <= 10_000_000.0 * 1.5);
        assert!(
            n.mean_ns == 0.0 || n.mean_ns > NOISE_GAP_NS as f64,
            "{}",
            n.mean_ns
        );
    }

    #[test]
    fn the_spread_of_a_shifted_exponential_is_its_scale_whatever_its_outliers() {
        // 1000 evenly spaced quantiles of 2000 + Exp(300), then 5 ms outliers.
        let n = 1_000;
        let mut xs: Vec<u64> = (0..n)
            .map(|i| {
                let p = (i as f64 + 0.5) / n as f64;
                (2_000.0 - 300.0 * (1.0 - p).ln()) as u64
            })
            .collect();
        xs.extend([5_000_000; 10]);
        let b = exp_scale(&xs);
        assert!((b - 300.0).abs() < 10.0, "scale {b}");
        assert_eq!(exp_scale(&[5, 6]), 0.0, "too few samples");
    }

    #[test]
    fn pinning_to_a_missing_cpu_fails_cleanly() {
        let r = pingpong((0, libc::CPU_SETSIZE as usize - 1), 10);
        assert!(matches!(r, Err(Error::Failed(m)) if m.contains("could not pin")));
    }
}
