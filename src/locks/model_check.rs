//! The shuttle harness every [`RawRwLock`] kind is model-checked through;
//! compiled only under `--cfg shuttle`, where the kinds' atomics, spin hints,
//! parking and clock come from the model (see `platform/native.rs`).
//!
//! ```text
//! RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=/work/tgt/<name>-shuttle \
//!     cargo test --release --lib locks::
//! ```
//!
//! A check runs a [`Plan`] (one list of [`Op`]s per model thread) against one
//! guarded counter, [`RwLock<L, u64>`], and on every schedule checks:
//! - mutual exclusion: every hold passes through an [`Occupancy`] word, so a
//!   writer is alone inside and a reader never meets a writer (nor another
//!   reader, for kinds without SHARED_READERS). Each hold lingers for a few
//!   scheduling points so others can race the holder;
//! - no lost wake-up: every thread finishes. A thread parked forever makes
//!   shuttle report a deadlock; one spinning forever exceeds [`MAX_STEPS`];
//! - every write is visible and the lock is free at the end: after the joins
//!   a `try_write` must succeed and see the counter equal the writes done.
//!
//! Two plans: [`roles`] gives each thread one fixed op, done twice (so
//! handoffs and re-acquisitions happen), to aim a check at one race;
//! [`op_mix`] runs every entry point, staggered by thread so different
//! threads run different entry points at the same time.
//!
//! Bound: `schedules` schedules from shuttle's random scheduler, then as many
//! from PCT (Burckhardt et al. 2010) at depth [`PCT_DEPTH`], both from fixed
//! seeds so a run is reproducible; each at most [`MAX_STEPS`] steps. Random
//! scheduling is the one that finds the injected lost wake-ups listed below;
//! PCT adds depth-bounded coverage.
//!
//! Each check runs in a child process, so a kind that crashes (a wild
//! pointer from a node used after its owner left) fails its test instead of
//! the whole run (see [`check`]).
//!
//! Negative controls, run by hand (each made the named tests fail): a 2007
//! rwsem whose writer may enter while readers hold (mutual exclusion, all
//! sizes); the waiters-bit race (docs/kernel.md), a writer that sets WAITERS and parks on a free
//! lock (deadlock, rwsem and mutex, all sizes); an up_read that forgets the
//! parked first writer (deadlock, rwsem three and four threads); a 2007
//! up_write that forgets to wake (deadlock, all sizes). Re-run when the two
//! harnesses were merged into this one: an unlock_write_slow that forgets to
//! wake (deadlock, rwsem and mutex, all sizes); a ticket spinlock whose
//! unlock leaves the head ticket when someone waits (step bound, both
//! spinlock checks). Not caught, by design: a handoff that never grants
//! (starvation is not a safety or liveness failure of a finite run; a
//! behaviour test covers it).

use super::platform::{Native, Platform};
use super::{KindInfo, RawRwLock, RwLock};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::{Config, MaxSteps, Runner, thread};
use std::sync::Arc;

/// Steps one execution may take before it is failed as a livelock.
// One bound for every kind. Spinning kinds need a small one: a lost wake-up
// there is waiters polling forever (each poll one step), and at shuttle's
// default of 1M steps a stuck execution takes seconds instead of
// milliseconds to fail. Sleeping kinds park instead, so their lost wake-ups
// show as deadlocks whatever the bound; for them the bound must only not cut
// a correct run short. Measured on every check here, both plan styles: all
// executions finish within 400 steps (a 200-step bound fails some of each),
// so 10k is 25x room.
pub const MAX_STEPS: usize = 10_000;

/// PCT's bug depth: finds any bug needing up to 3 ordering constraints (the
/// handoff races that need two preemptions) with probability at least
/// 1/(threads * steps^2) per schedule.
pub const PCT_DEPTH: usize = 3;

/// Seed of both schedulers (any fixed value: it makes runs reproducible).
pub const SEED: u64 = 0x5eed_2007;

/// One hold, through one entry point of the trait.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Read,
    TryRead,
    CriticalRead,
    Write,
    TryWrite,
    /// Write, then downgrade and hold as a reader.
    Downgrade,
}

/// What each model thread does, in order: one list of ops per thread.
pub type Plan = Vec<Vec<Op>>;

/// One thread per role, each doing its role twice.
pub fn roles(roles: &[Op]) -> Plan {
    roles.iter().map(|&op| vec![op; 2]).collect()
}

/// `threads` threads running `iters` ops each from the mix of every entry
/// point, thread `t` starting `t` ops into the mix.
pub fn op_mix(threads: usize, iters: usize) -> Plan {
    const MIX: [Op; 6] = [
        Op::Write,
        Op::Read,
        Op::Downgrade,
        Op::CriticalRead,
        Op::TryWrite,
        Op::TryRead,
    ];
    (0..threads)
        .map(|t| (0..iters).map(|i| MIX[(t + i) % MIX.len()]).collect())
        .collect()
}

/// Set in the child process a check runs in (see [`check`]).
const CHILD: &str = "RMAP_STORM_SHUTTLE_CHILD";

/// Model-check kind `L` running `plan` (2-4 threads is the useful range)
/// over `schedules` random then `schedules` PCT schedules. Fails the test on
/// the first violating schedule, printing it for replay.
///
/// The check runs in a child process (this test binary, re-run for this one
/// test), because a broken kind can do worse than fail an assertion: a
/// qspinlock that hands its queue over too early lets a node on a returned
/// stack be written, and the SIGSEGV used to end the whole shuttle run. The
/// parent turns any failure of the child, a signal included, into this
/// test's failure with the child's last output.
pub fn check<L: RawRwLock + KindInfo>(schedules: usize, plan: Plan) {
    if std::env::var_os(CHILD).is_some() {
        return check_here::<L>(schedules, plan);
    }
    let test = std::thread::current()
        .name()
        .expect("libtest names each test's thread after the test")
        .to_owned();
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([
            test.as_str(),
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("starting the shuttle check's child process");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ran = stdout.contains("test result: ok. 1 passed");
    if out.status.success() && ran {
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let how = match out.status.signal() {
        Some(sig) => format!("killed by signal {sig}"),
        None if !ran && out.status.success() => "no test of that name ran".to_owned(),
        None => format!("{}", out.status),
    };
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = all.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    panic!(
        "{test}: the shuttle check failed in its child process ({how}); its last output:\n{tail}"
    );
}

/// [`check`] in this process.
fn check_here<L: RawRwLock + KindInfo>(schedules: usize, plan: Plan) {
    let mut config = Config::new();
    config.max_steps = MaxSteps::FailAfter(MAX_STEPS);
    // The only warning is about lazy statics (the parking model's queue and
    // clock) being dropped per execution, which is what they are for.
    config.silence_warnings = true;
    let plan = Arc::new(plan);
    let body = move || run_once::<L>(&plan);
    Runner::new(
        RandomScheduler::new_from_seed(SEED, schedules),
        config.clone(),
    )
    .run(body.clone());
    Runner::new(
        PctScheduler::new_from_seed(SEED, PCT_DEPTH, schedules),
        config,
    )
    .run(body);
}

fn run_once<L: RawRwLock + KindInfo>(plan: &Plan) {
    let lock = Arc::new(RwLock::<L, u64>::new(0));
    let occ = Arc::new(Occupancy::new(L::SHARED_READERS));
    let handles: Vec<_> = plan
        .iter()
        .map(|ops| {
            let (lock, occ, ops) = (lock.clone(), occ.clone(), ops.clone());
            thread::spawn(move || ops.into_iter().map(|op| act(&lock, &occ, op)).sum::<u64>())
        })
        .collect();
    let writes: u64 = handles
        .into_iter()
        .map(|h| h.join().expect("a model thread failed"))
        .sum();
    // A blocking write, not a trylock: percpu-rwsem's trylock fails while
    // its rcu_sync still waits out the last writer's grace period. A lock
    // left held or corrupt blocks it forever, which shuttle reports as a
    // deadlock (sleeping kinds) or as running past MAX_STEPS (spinning ones).
    let g = lock.write();
    assert_eq!(*g, writes, "a write was lost");
}

/// Stay inside for a few scheduling points, so others can race the holder.
fn linger() {
    for _ in 0..2 {
        Native::spin_hint();
    }
}

/// Run one op; returns the writes it did.
fn act<L: RawRwLock>(lock: &RwLock<L, u64>, occ: &Occupancy, op: Op) -> u64 {
    let read = |g: super::ReadGuard<'_, L, u64>| {
        occ.enter_read();
        linger();
        occ.leave_read();
        drop(g);
        0
    };
    let write = |mut g: super::WriteGuard<'_, L, u64>| {
        occ.enter_write();
        *g += 1;
        linger();
        occ.leave_write();
        1
    };
    match op {
        Op::Read => read(lock.read()),
        Op::TryRead => lock.try_read().map_or(0, read),
        Op::CriticalRead => read(lock.read_critical()),
        Op::Write => write(lock.write()),
        Op::TryWrite => lock.try_write().map_or(0, write),
        Op::Downgrade => {
            let mut g = lock.write();
            occ.enter_write();
            *g += 1;
            linger();
            occ.write_to_read();
            let r = g.downgrade();
            linger();
            occ.leave_read();
            drop(r);
            1
        }
    }
}

/// Who is inside: a reader count and a writer bit, checked on every entry.
struct Occupancy {
    word: AtomicUsize,
    shared_readers: bool,
}

const WRITER: usize = 1 << (usize::BITS - 1);

impl Occupancy {
    fn new(shared_readers: bool) -> Self {
        Occupancy {
            word: AtomicUsize::new(0),
            shared_readers,
        }
    }

    fn enter_write(&self) {
        let prev = self.word.fetch_or(WRITER, Ordering::SeqCst);
        assert_eq!(prev, 0, "a writer entered while held: {prev:#x}");
    }

    fn leave_write(&self) {
        self.word.fetch_and(!WRITER, Ordering::SeqCst);
    }

    fn enter_read(&self) {
        let prev = self.word.fetch_add(1, Ordering::SeqCst);
        assert_eq!(prev & WRITER, 0, "a reader entered while a writer held");
        assert!(
            self.shared_readers || prev == 0,
            "two holders of an exclusive-only lock"
        );
    }

    fn leave_read(&self) {
        self.word.fetch_sub(1, Ordering::SeqCst);
    }

    /// Called while still holding exclusively, just before the downgrade, so
    /// the checker never shows a writer that is already a reader: the writer
    /// bit becomes one reader in one step.
    fn write_to_read(&self) {
        let prev = self.word.swap(1, Ordering::SeqCst);
        assert_eq!(prev, WRITER, "someone entered beside a downgrading writer");
    }
}
