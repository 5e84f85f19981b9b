//! Shuttle model checks by fixed thread roles, used by the spinning kinds
//! (`model_check` is the op-mix harness the sleeping kinds use; both check
//! the same contract and should become one) (built only for
//! `cargo test` under `RUSTFLAGS="--cfg shuttle"`).
//!
//! A check runs a few threads with fixed roles against one lock under
//! shuttle's random and PCT schedulers. Every acquisition passes through an
//! [`Occupancy`] word that fails the execution if a writer coexists with anyone
//! (or, for exclusive-only kinds, two holders coexist); every thread must
//! finish within [`MAX_STEPS`] scheduling steps (a lost wake-up in a spinning
//! lock shows as waiters polling forever); and at the end the lock must be free.

use super::RawRwLock;
use super::shim::{AtomicUsize, Ordering, spin_hint};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, MaxSteps, Runner};
use std::sync::Arc;

/// Steps one execution may take before it is failed as a livelock.
// Measured on these checks: every execution finishes within 400 steps (each
// poll of a spin loop is one step; a 200-step bound fails some), so 10k is 25x
// room, and a stuck execution fails in milliseconds instead of running to
// shuttle's default bound of 1M steps.
pub const MAX_STEPS: usize = 10_000;

/// PCT's bug depth: enough for the three-way races of a 3-thread check.
// Burckhardt et al., "A Randomized Scheduler with Probabilistic Guarantees of
// Finding Bugs" (ASPLOS 2010): depth d finds a depth-d bug with probability
// at least 1/(n * k^(d-1)); 3 covers the handoff races that need two
// preemptions.
const PCT_DEPTH: usize = 3;

/// Run `body` under `iterations` random schedules, then `iterations` PCT ones.
pub fn check(iterations: usize, body: impl Fn() + Send + Sync + Copy + 'static) {
    let mut config = Config::new();
    config.max_steps = MaxSteps::FailAfter(MAX_STEPS);
    Runner::new(RandomScheduler::new(iterations), config.clone()).run(body);
    Runner::new(PctScheduler::new(PCT_DEPTH, iterations), config).run(body);
}

/// What one model thread does (twice, so handoffs and re-acquisitions happen).
#[derive(Clone, Copy, Debug)]
pub enum Role {
    Read,
    TryRead,
    CriticalRead,
    Write,
    TryWrite,
    /// Write, then downgrade and hold as a reader.
    Downgrade,
}

/// Spawn one thread per role on one lock of kind `L`, check every hold, join
/// them all, and check that the lock is free again.
pub fn roles<L: RawRwLock>(roles: &'static [Role]) {
    let lock = Arc::new(L::new());
    let occ = Arc::new(Occupancy::new(L::SHARED_READERS));
    let threads: Vec<_> = roles
        .iter()
        .map(|&role| {
            let (lock, occ) = (Arc::clone(&lock), Arc::clone(&occ));
            shuttle::thread::spawn(move || {
                for _ in 0..2 {
                    act(&*lock, &occ, role);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("model thread panicked");
    }
    let token = lock
        .try_lock_exclusive()
        .expect("lock left held or corrupt after every thread released it");
    // SAFETY: the token was just granted by this lock.
    unsafe { lock.unlock_exclusive(token) };
}

/// Stay inside for a few scheduling points, so others can race the holder.
fn linger() {
    for _ in 0..2 {
        spin_hint();
    }
}

fn act<L: RawRwLock>(lock: &L, occ: &Occupancy, role: Role) {
    let read = |token: L::ReadToken| {
        occ.enter_read();
        linger();
        occ.leave_read();
        // SAFETY: the token came from `lock` and is released once.
        unsafe { lock.unlock_shared(token) };
    };
    let write = |token: L::WriteToken| {
        occ.enter_write();
        linger();
        occ.leave_write();
        // SAFETY: as above.
        unsafe { lock.unlock_exclusive(token) };
    };
    match role {
        Role::Read => read(lock.lock_shared()),
        Role::TryRead => lock.try_lock_shared().into_iter().for_each(read),
        Role::CriticalRead => read(lock.lock_shared_critical()),
        Role::Write => write(lock.lock_exclusive()),
        Role::TryWrite => lock.try_lock_exclusive().into_iter().for_each(write),
        Role::Downgrade => {
            let token = lock.lock_exclusive();
            occ.enter_write();
            linger();
            occ.leave_write();
            // SAFETY: as above.
            read(unsafe { lock.downgrade(token) });
        }
    }
}

/// Who is inside: a reader count and a writer bit, checked on every entry.
pub struct Occupancy {
    word: AtomicUsize,
    shared_readers: bool,
}

const WRITER: usize = 1 << (usize::BITS - 1);

impl Occupancy {
    pub fn new(shared_readers: bool) -> Self {
        Occupancy {
            word: AtomicUsize::new(0),
            shared_readers,
        }
    }

    pub fn enter_write(&self) {
        let prev = self.word.fetch_or(WRITER, Ordering::SeqCst);
        assert_eq!(prev, 0, "a writer entered while held: {prev:#x}");
    }

    pub fn leave_write(&self) {
        self.word.fetch_and(!WRITER, Ordering::SeqCst);
    }

    pub fn enter_read(&self) {
        let prev = self.word.fetch_add(1, Ordering::SeqCst);
        assert_eq!(prev & WRITER, 0, "a reader entered while a writer held");
        assert!(
            self.shared_readers || prev == 0,
            "two holders of an exclusive-only lock"
        );
    }

    pub fn leave_read(&self) {
        self.word.fetch_sub(1, Ordering::SeqCst);
    }
}
