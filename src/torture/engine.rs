//! Runs a torture [`Config`] over one lock, generic over [`RawRwLock`]: on
//! real threads here, or on the simulator ([`super::sim`]) when the config
//! says so. The threads' loop is [`super::worker`].
//!
//! On real threads:
//! Step 1: start every thread behind the [`Gate`] so they begin together.
//! Step 2: sleep for the duration, then raise the stop flag; each thread sees it
//! at the top of its next iteration.
//! Step 3 (watchdog): wait for the threads to finish their last iteration.
//! The run is declared stuck when no thread has finished for a whole window
//! (the duration, at least [`MIN_WINDOW`]), so a livelocked lock ends the run
//! at twice the duration, while a slow but moving drain is waited for. Threads
//! still running then (inside an acquire of a livelocked spinlock, or after a
//! lost wake-up) are reported as stuck and left behind: their progress
//! counters are atomics the main thread reads anyway, and the caller ends the
//! process.

use super::config::{Config, Engine, Role};
use super::gate::Gate;
use super::worker::{FAILS, Shared, TAKEN, ThreadEnd};
use crate::engine::sim::run::Ended;
use crate::locks::platform::Native;
use crate::locks::stats::LockStats;
use crate::locks::{KindInfo, LockKind, LockVisitor, RawRwLock};
use crate::metrics::ThreadCtx;
use crate::{Error, Result};
use hdrhistogram::Histogram;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

// Stack of a torture thread: its loop needs a few KiB; 256 KiB keeps 4096
// threads within 1 GiB of address space (std's default is 2 MiB each) with room
// for unoptimised builds.
const STACK: usize = 256 * 1024;

/// The watchdog's shortest window without a thread finishing. After the stop
/// flag, threads blocked in a spinning lock's queue drain at about one
/// scheduler period per handoff when waiters outnumber CPUs, and a thread
/// waking among N runnable ones waits up to N time slices (EEVDF): tens of
/// milliseconds on a loaded 2-core machine with 13 threads, seconds with
/// thousands. A 1 s quiet window tells that drain from a livelock, which
/// makes no progress at all.
pub const MIN_WINDOW: Duration = Duration::from_secs(1);

// How often the main thread looks for finished threads after the stop flag.
const POLL: Duration = Duration::from_millis(1);

/// What one run did.
pub struct Outcome {
    /// The kind that ran (`L::KIND`).
    pub kind: LockKind,
    pub config: Config,
    /// `L::SHARED_READERS`: false for exclusive-only kinds.
    pub shared_readers: bool,
    /// `L::HAS_DOWNGRADE`: false when downgraders just wrote.
    pub has_downgrade: bool,
    /// From the start to the stop flag.
    pub elapsed: Duration,
    /// Every thread, in thread-number order ([`Config::thread_roles`]).
    pub threads: Vec<ThreadOutcome>,
    /// The lock's own counters, merged over the threads that finished.
    pub lock: LockStats,
    /// Context switches, summed over the threads that finished.
    pub ctx: ThreadCtx,
    /// The simulator's own figures, for a simulated run.
    pub sim: Option<Ended>,
}

/// One thread's share of the run.
pub struct ThreadOutcome {
    pub role: Role,
    /// Acquisitions completed (one per loop iteration; a downgrader's
    /// write + downgrade counts once).
    pub taken: u64,
    /// Acquisitions in which the exclusion check failed.
    pub fails: u64,
    pub end: End,
}

/// How a thread's run ended.
pub enum End {
    /// It saw the stop flag and returned; `acquire_ns` is the time from each
    /// request to its grant.
    Finished { acquire_ns: Histogram<u64> },
    /// Still running when the watchdog gave up (no thread had finished for
    /// its window): in practice inside an acquire.
    Stuck,
    /// It panicked (a lock implementation's assertion).
    Panicked,
}

impl Outcome {
    /// Exclusion failures over all threads.
    pub fn fails(&self) -> u64 {
        self.threads.iter().map(|t| t.fails).sum()
    }

    /// Threads still inside an acquire at the watchdog.
    pub fn stuck(&self) -> usize {
        self.threads
            .iter()
            .filter(|t| matches!(t.end, End::Stuck))
            .count()
    }

    /// Threads that panicked.
    pub fn panicked(&self) -> usize {
        self.threads
            .iter()
            .filter(|t| matches!(t.end, End::Panicked))
            .count()
    }

    /// Any exclusion failure, stuck or panicked thread: the run failed.
    pub fn failed(&self) -> bool {
        self.fails() > 0 || self.stuck() > 0 || self.panicked() > 0
    }
}

/// Run `cfg` on a lock of `cfg.kind`, on the engine it names.
pub fn run(cfg: &Config) -> Result<Outcome> {
    match &cfg.engine {
        Engine::Native => cfg.kind.dispatch::<Native, _>(Run(cfg)),
        Engine::Sim(spec) => Ok(super::sim::run(cfg, spec)),
    }
}

struct Run<'a>(&'a Config);

impl LockVisitor for Run<'_> {
    type Output = Result<Outcome>;
    fn visit<L: RawRwLock + KindInfo>(self) -> Result<Outcome> {
        run_with::<L>(self.0)
    }
}

/// Run `cfg` on real threads on a lock of type `L` (`cfg.kind` is ignored):
/// tests use it for locks that are not kinds, such as the busted negative
/// control.
pub fn run_with<L: RawRwLock + KindInfo>(cfg: &Config) -> Result<Outcome> {
    let roles = cfg.thread_roles();
    let shared = Arc::new(Shared::<L>::new(cfg, roles.len()));
    let gate = Arc::new(Gate::default());
    let handles = spawn_all(&shared, &gate, &roles)?;

    gate.wait_for(roles.len());
    gate.open();
    let start = Instant::now();
    thread::sleep(cfg.duration);
    shared.stop.store(true, Relaxed);
    let elapsed = start.elapsed();

    await_threads(&handles, cfg.duration.max(MIN_WINDOW));
    let ends = handles
        .into_iter()
        .map(|h| {
            if !h.is_finished() {
                Exit::Stuck // dropping the handle detaches the thread
            } else {
                h.join()
                    .map_or(Exit::Panicked, |done| Exit::Done(Box::new(done)))
            }
        })
        .collect();
    Ok(collect(&shared, cfg, roles, ends, elapsed, None))
}

/// Start one thread per role entry. If the OS refuses one, release those
/// already waiting (they see the stop flag at once) and report.
fn spawn_all<L: RawRwLock + KindInfo>(
    shared: &Arc<Shared<L>>,
    gate: &Arc<Gate>,
    roles: &[Role],
) -> Result<Vec<JoinHandle<ThreadEnd>>> {
    let mut handles = Vec::with_capacity(roles.len());
    for (me, &role) in roles.iter().enumerate() {
        let (sh, g) = (Arc::clone(shared), Arc::clone(gate));
        let spawned = thread::Builder::new()
            .name(format!("torture-{me}"))
            .stack_size(STACK)
            .spawn(move || sh.worker(Some(&g), me, role));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                shared.stop.store(true, Relaxed);
                gate.open();
                for h in handles {
                    let _ = h.join();
                }
                return Err(Error::failed(format!(
                    "torture: could not start thread {} of {}: {e}",
                    me + 1,
                    roles.len()
                )));
            }
        }
    }
    Ok(handles)
}

/// The watchdog: return when every thread finished, or when none has
/// finished for `window`.
fn await_threads(handles: &[JoinHandle<ThreadEnd>], window: Duration) {
    let finished = || handles.iter().filter(|h| h.is_finished()).count();
    let (mut done, mut last_progress) = (finished(), Instant::now());
    while done < handles.len() && last_progress.elapsed() < window {
        thread::sleep(POLL);
        let now_done = finished();
        if now_done > done {
            (done, last_progress) = (now_done, Instant::now());
        }
    }
}

/// How a thread left, before its figures are gathered.
pub enum Exit {
    Done(Box<ThreadEnd>),
    Stuck,
    Panicked,
}

/// Gather every thread's figures (threads not done are left running).
pub fn collect<L: RawRwLock + KindInfo>(
    shared: &Shared<L>,
    cfg: &Config,
    roles: Vec<Role>,
    ends: Vec<Exit>,
    elapsed: Duration,
    sim: Option<Ended>,
) -> Outcome {
    let mut lock = LockStats::default();
    let mut ctx = ThreadCtx::default();
    let threads = roles
        .into_iter()
        .zip(ends)
        .enumerate()
        .map(|(me, (role, end))| {
            let end = match end {
                Exit::Done(done) => {
                    lock.merge(&done.lock);
                    ctx = ctx + done.ctx;
                    End::Finished {
                        acquire_ns: done.acquire_ns,
                    }
                }
                Exit::Stuck => End::Stuck,
                Exit::Panicked => End::Panicked,
            };
            ThreadOutcome {
                role,
                taken: shared.counts.get(me, TAKEN),
                fails: shared.counts.get(me, FAILS),
                end,
            }
        })
        .collect();
    Outcome {
        kind: L::KIND,
        config: cfg.clone(),
        shared_readers: L::SHARED_READERS,
        has_downgrade: L::HAS_DOWNGRADE,
        elapsed,
        threads,
        lock,
        ctx,
        sim,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(threads: [usize; 4], ms: u64, load_us: u64) -> Config {
        Config {
            kind: LockKind::default_kind(),
            threads,
            duration: Duration::from_millis(ms),
            load: Duration::from_micros(load_us),
            interval: Duration::ZERO,
            sched: false,
            exponential: false,
            seed: 0,
            engine: Engine::Native,
        }
    }

    #[test]
    fn every_role_makes_progress_without_failures_on_the_default_kind() {
        let out = run(&config([2, 1, 1, 1], 50, 1)).unwrap();
        assert_eq!(out.kind, LockKind::default_kind());
        assert_eq!(out.threads.len(), 5);
        assert_eq!(out.fails(), 0);
        assert!(!out.failed());
        for t in &out.threads {
            assert!(t.taken > 0, "{:?} made no progress", t.role);
            let End::Finished { acquire_ns } = &t.end else {
                panic!("{:?} did not finish", t.role);
            };
            assert_eq!(acquire_ns.len(), t.taken);
        }
    }
}
