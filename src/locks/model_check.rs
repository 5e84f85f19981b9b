//! A shuttle harness any [`RawRwLock`] kind can be run through; compiled only
//! under `--cfg shuttle`, where the kinds' atomics, spin hints, parking and
//! clock come from the model (see `shim.rs`).
//!
//! ```text
//! RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=/work/tgt/<name>-shuttle \
//!     cargo test --release --lib locks::
//! ```
//!
//! What a run checks, on every schedule:
//! - mutual exclusion: a writer is alone inside; a reader never meets a writer
//!   (nor another reader, for kinds without SHARED_READERS);
//! - no lost wake-up: every thread finishes. A thread parked forever makes
//!   shuttle report a deadlock; one spinning forever exhausts shuttle's step
//!   bound (1,000,000 steps per schedule). Either fails the test;
//! - every write is visible: the guarded counter equals the writes done.
//!
//! Bound: `schedules` schedules from shuttle's random scheduler, then as many
//! from PCT (Burckhardt et al. 2010) at depth [`PCT_DEPTH`], both from fixed
//! seeds so a run is reproducible; each thread runs `iters` steps of the op
//! mix below, staggered by thread so different threads run different entry
//! points at the same time. Random scheduling is the one that finds the
//! injected lost wake-ups listed below; PCT adds depth-bounded coverage.
//!
//! Negative controls, run by hand when this harness was written (each made
//! the named tests fail): a 2007 rwsem whose writer may enter while readers
//! hold (mutual exclusion, all sizes); the STACK.md race, a writer that sets
//! WAITERS and parks on a free lock (deadlock, rwsem and mutex, all sizes);
//! an up_read that forgets the parked first writer (deadlock, rwsem three and
//! four threads); a 2007 up_write that forgets to wake (deadlock, all sizes).
//! Not caught, by design: a handoff that never grants (starvation is not a
//! safety or liveness failure of a finite run; a behaviour test covers it).

use super::shim::{AtomicUsize, Ordering};
use super::{RawRwLock, RwLock};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner, thread};
use std::sync::Arc;

/// PCT's bug depth: finds any bug needing up to 3 ordering constraints with
/// probability at least 1/(threads * steps^2) per schedule.
pub const PCT_DEPTH: usize = 3;

/// Seed of both schedulers (any fixed value: it makes runs reproducible).
pub const SEED: u64 = 0x5eed_2007;

/// One step of a thread's work: every entry point of the trait.
#[derive(Clone, Copy, Debug)]
enum Op {
    Write,
    Read,
    TryWrite,
    TryRead,
    Critical,
    Downgrade,
}

const OPS: [Op; 6] = [
    Op::Write,
    Op::Read,
    Op::Downgrade,
    Op::Critical,
    Op::TryWrite,
    Op::TryRead,
];

/// Who is inside the critical section, as the checker counts them.
#[derive(Default)]
struct Inside {
    writers: AtomicUsize,
    readers: AtomicUsize,
}

impl Inside {
    fn enter_write(&self) {
        assert_eq!(
            self.writers.fetch_add(1, Ordering::SeqCst),
            0,
            "two writers inside"
        );
        assert_eq!(
            self.readers.load(Ordering::SeqCst),
            0,
            "a writer inside with readers"
        );
    }

    fn leave_write(&self) {
        self.writers.fetch_sub(1, Ordering::SeqCst);
    }

    fn enter_read<L: RawRwLock>(&self) {
        let others = self.readers.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            self.writers.load(Ordering::SeqCst),
            0,
            "a reader inside with a writer"
        );
        if !L::SHARED_READERS {
            assert_eq!(others, 0, "two readers inside an exclusive-only kind");
        }
    }

    fn leave_read(&self) {
        self.readers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Called while still holding exclusively, just before the downgrade, so
    /// the checker never shows a writer that is already a reader.
    fn write_to_read(&self) {
        self.readers.fetch_add(1, Ordering::SeqCst);
        self.writers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Model-check kind `L` with `threads` threads (2-4 is the useful range)
/// running `iters` steps each, over `schedules` PCT schedules. Panics (fails
/// the test) on the first violating schedule, printing it for replay.
pub fn check_mutual_exclusion<L: RawRwLock>(threads: usize, iters: usize, schedules: usize) {
    let config = || {
        let mut config = Config::new();
        // The only warning is about lazy statics (the parking model's queue
        // and clock) being dropped per execution, which is what they are for.
        config.silence_warnings = true;
        config
    };
    Runner::new(RandomScheduler::new_from_seed(SEED, schedules), config())
        .run(move || run_once::<L>(threads, iters));
    Runner::new(
        PctScheduler::new_from_seed(SEED, PCT_DEPTH, schedules),
        config(),
    )
    .run(move || run_once::<L>(threads, iters));
}

fn run_once<L: RawRwLock>(threads: usize, iters: usize) {
    let lock = Arc::new(RwLock::<L, u64>::new(0));
    let inside = Arc::new(Inside::default());
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let lock = lock.clone();
            let inside = inside.clone();
            thread::spawn(move || {
                (0..iters)
                    .map(|i| step(&lock, &inside, OPS[(t + i) % OPS.len()]))
                    .sum::<u64>()
            })
        })
        .collect();
    let writes: u64 = handles
        .into_iter()
        .map(|h| h.join().expect("a model thread failed"))
        .sum();
    assert_eq!(*lock.read(), writes, "a write was lost");
}

/// Run one op; returns the writes it did.
fn step<L: RawRwLock>(lock: &RwLock<L, u64>, inside: &Inside, op: Op) -> u64 {
    match op {
        Op::Write => {
            let mut g = lock.write();
            write_inside(&mut g, inside);
            1
        }
        Op::TryWrite => match lock.try_write() {
            Some(mut g) => {
                write_inside(&mut g, inside);
                1
            }
            None => 0,
        },
        Op::Read => read_inside(lock.read(), inside),
        Op::TryRead => lock.try_read().map_or(0, |g| read_inside(g, inside)),
        Op::Critical => read_inside(lock.read_critical(), inside),
        Op::Downgrade => {
            let mut g = lock.write();
            inside.enter_write();
            *g += 1;
            inside.write_to_read();
            let r = g.downgrade();
            thread::yield_now();
            inside.leave_read();
            drop(r);
            1
        }
    }
}

fn write_inside<L: RawRwLock>(g: &mut super::WriteGuard<'_, L, u64>, inside: &Inside) {
    inside.enter_write();
    **g += 1;
    thread::yield_now();
    inside.leave_write();
}

fn read_inside<L: RawRwLock>(g: super::ReadGuard<'_, L, u64>, inside: &Inside) -> u64 {
    inside.enter_read::<L>();
    thread::yield_now();
    inside.leave_read();
    drop(g);
    0
}
