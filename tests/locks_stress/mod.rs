//! The native exclusion stress every kind's behaviour tests run: real
//! threads in every role on one lock, each holder checking who else is
//! inside.
//!
//! What makes it a test that can fail, and fail well:
//! - an overlap is recorded (with what was seen), the holder releases as
//!   usual, and the run goes on; the caller asserts on the report after
//!   every thread is out, so a broken kind fails with a message instead of
//!   a panic inside a thread that leaves the lock held;
//! - the caller never waits forever: threads report when they finish, and a
//!   thread still inside the lock at the deadline is reported as stuck (and
//!   left behind) rather than joined;
//! - writers get real turns while readers run: every thread pauses between
//!   holds, so even a reader-preferring lock (rwlock_t) or an unfair one
//!   (tas) is sometimes free, and the
//!   run goes on until every writer has written [`MIN_WRITER_TURNS`] times
//!   while readers were still running (or the deadline passes, which the
//!   report shows).

use rmap_storm::locks::{KindInfo, RawRwLock};
use rmap_storm::torture::check::{Occupancy, Seen};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Writes each writer must make while readers still run.
pub const MIN_WRITER_TURNS: u64 = 1_000;
/// Holds each thread makes at least.
pub const MIN_OPS: u64 = 3_000;
/// Readers run at least this long: the windows a broken kind leaves open
/// are a few instructions wide, and on two cores they are hit only every
/// so many thousand holds.
const MIN_RUN: Duration = Duration::from_millis(400);
/// The run ends here even if the turns above were not reached. A correct
/// lock reaches them in well under a second on an idle 2-core machine; the
/// margin is for a loaded one (3 s once failed a correct ticket lock there,
/// with a build running beside the tests).
/// The run stops as soon as the turns are made, so a passing run never waits
/// for it.
const DEADLINE: Duration = Duration::from_secs(20);
/// How long after the deadline a thread may take to finish.
const GRACE: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// lock_exclusive, try_lock_exclusive in turn.
    Writer,
    /// lock_exclusive, then downgrade and hold as a reader.
    Downgrader,
    /// lock_shared, try_lock_shared, lock_shared_critical in turn.
    Reader,
}

const ROLES: [Role; 5] = [
    Role::Writer,
    Role::Writer,
    Role::Downgrader,
    Role::Reader,
    Role::Reader,
];

/// What a stress run saw.
#[derive(Debug)]
pub struct Report {
    pub overlaps: u64,
    /// The first overlap: which role saw what.
    pub first_overlap: Option<String>,
    /// Per writer and downgrader: writes made while readers still ran.
    pub writer_turns: Vec<u64>,
    /// Threads still inside the lock after the deadline and its grace.
    pub stuck: usize,
    /// After every thread left, a writer got the lock (within the grace):
    /// the word was left free, not corrupt.
    pub free_after: bool,
}

impl Report {
    /// Everything a correct lock must show; the message says what failed.
    pub fn check(&self, kind: &str) -> Result<(), String> {
        if self.stuck > 0 {
            return Err(format!("{kind}: {} threads stuck in the lock", self.stuck));
        }
        if !self.free_after {
            return Err(format!(
                "{kind}: no writer got the lock after every thread left (held or corrupt)"
            ));
        }
        if self.overlaps > 0 {
            return Err(format!(
                "{kind}: {} overlaps, the first: {}",
                self.overlaps,
                self.first_overlap.as_deref().unwrap_or("?")
            ));
        }
        if self.writer_turns.iter().any(|&t| t < MIN_WRITER_TURNS) {
            return Err(format!(
                "{kind}: writers' turns while readers ran {:?}, want {MIN_WRITER_TURNS} each",
                self.writer_turns
            ));
        }
        Ok(())
    }
}

/// Shared by the threads of one run.
struct Shared<L> {
    lock: L,
    occ: Occupancy,
    overlaps: AtomicU64,
    first: Mutex<Option<String>>,
    readers_running: AtomicBool,
    stop: AtomicBool,
}

impl<L: RawRwLock + KindInfo> Shared<L> {
    fn saw(&self, seen: Seen, what: &str) {
        if seen == Seen::Violation {
            self.overlaps.fetch_add(1, Ordering::Relaxed);
            let mut first = self.first.lock().unwrap();
            first.get_or_insert_with(|| what.to_owned());
        }
    }

    /// A few hundred ns inside; every 32nd hold yields the CPU, so holds
    /// sometimes outlast a spin budget and waiters of sleeping kinds park.
    fn linger(i: u64) {
        if i.is_multiple_of(32) {
            thread::yield_now();
        } else {
            for _ in 0..50 {
                std::hint::spin_loop();
            }
        }
    }

    /// Between two holds: 1-4 holds' worth of spinning, and every 8th
    /// time the CPU given away, so on an oversubscribed machine a spinning
    /// writer that was descheduled gets to run while the lock is free.
    fn pause(i: u64) {
        if i % 8 == 7 {
            thread::yield_now();
        } else {
            for _ in 0..50 * (1 + i % 4) {
                std::hint::spin_loop();
            }
        }
    }

    fn read_hold(&self, token: L::ReadToken, i: u64) {
        let entered = self.occ.enter_read(L::SHARED_READERS);
        Self::linger(i);
        let left = self.occ.exit_read(L::SHARED_READERS);
        self.saw(entered.and(left), "a reader met a holder it must exclude");
        // SAFETY: the token came from this lock and is released once.
        unsafe { self.lock.unlock_shared(token) };
    }

    fn write_hold(&self, token: L::WriteToken, i: u64) {
        let entered = self.occ.enter_write();
        Self::linger(i);
        let left = self.occ.exit_write();
        self.saw(entered.and(left), "a writer met another holder");
        // SAFETY: as above.
        unsafe { self.lock.unlock_exclusive(token) };
    }

    fn downgrade_hold(&self, i: u64) {
        let token = self.lock.lock_exclusive();
        let entered = self.occ.enter_write();
        Self::linger(i);
        let turned = self.occ.write_to_read();
        self.saw(
            entered.and(turned),
            "a downgrading writer met another holder",
        );
        // SAFETY: the token came from this lock.
        let token = unsafe { self.lock.downgrade(token) };
        let seen = self.occ.check_read(L::SHARED_READERS);
        Self::linger(i);
        let left = self.occ.exit_read(L::SHARED_READERS);
        self.saw(seen.and(left), "a downgraded holder met a writer");
        // SAFETY: as above.
        unsafe { self.lock.unlock_shared(token) };
    }

    /// One hold of `role`, its `i`th; returns whether it wrote.
    fn act(&self, role: Role, i: u64) -> bool {
        match (role, i % 3) {
            (Role::Writer, 0) => match self.lock.try_lock_exclusive() {
                Some(t) => {
                    self.write_hold(t, i);
                    true
                }
                None => false,
            },
            (Role::Writer, _) => {
                self.write_hold(self.lock.lock_exclusive(), i);
                true
            }
            (Role::Downgrader, _) => {
                self.downgrade_hold(i);
                true
            }
            (Role::Reader, 0) => {
                self.read_hold(self.lock.lock_shared(), i);
                false
            }
            (Role::Reader, 1) => {
                if let Some(t) = self.lock.try_lock_shared() {
                    self.read_hold(t, i);
                }
                false
            }
            (Role::Reader, _) => {
                self.read_hold(self.lock.lock_shared_critical(), i);
                false
            }
        }
    }
}

/// Run the stress on a fresh lock of kind `L`. See the module doc.
pub fn stress<L: RawRwLock + KindInfo>() -> Report {
    let shared = Arc::new(Shared {
        lock: L::new(),
        occ: Occupancy::default(),
        overlaps: AtomicU64::new(0),
        first: Mutex::new(None),
        readers_running: AtomicBool::new(true),
        stop: AtomicBool::new(false),
    });
    let writers: Vec<usize> = (0..ROLES.len())
        .filter(|&i| ROLES[i] != Role::Reader)
        .collect();
    let turns: Arc<Vec<AtomicU64>> = Arc::new(ROLES.iter().map(|_| AtomicU64::new(0)).collect());
    let (done_tx, done) = channel::<()>();
    let start = Instant::now();
    for (me, &role) in ROLES.iter().enumerate() {
        let (shared, turns, done_tx) = (Arc::clone(&shared), Arc::clone(&turns), done_tx.clone());
        thread::spawn(move || {
            let mut i = 0u64;
            loop {
                let stopping = match role {
                    Role::Reader => !shared.readers_running.load(Ordering::Relaxed),
                    _ => shared.stop.load(Ordering::Relaxed),
                };
                if stopping && i >= MIN_OPS {
                    break;
                }
                let wrote = shared.act(role, i);
                if wrote && shared.readers_running.load(Ordering::Relaxed) {
                    turns[me].fetch_add(1, Ordering::Relaxed);
                }
                // A pause: the lock is sometimes free, so even a
                // reader-preferring or unfair kind lets each writer in.
                Shared::<L>::pause(i);
                i += 1;
            }
            let _ = done_tx.send(());
        });
    }
    drop(done_tx);
    // Readers run until every writer had its turns among them, or the
    // deadline; then writers get the lock alone and stop too.
    while start.elapsed() < MIN_RUN
        || (start.elapsed() < DEADLINE
            && !writers
                .iter()
                .all(|&w| turns[w].load(Ordering::Relaxed) >= MIN_WRITER_TURNS))
    {
        thread::sleep(Duration::from_millis(1));
    }
    shared.readers_running.store(false, Ordering::Relaxed);
    shared.stop.store(true, Ordering::Relaxed);
    let give_up = Instant::now() + GRACE;
    let mut finished = 0;
    while finished < ROLES.len() {
        let left = give_up.saturating_duration_since(Instant::now());
        match done.recv_timeout(left) {
            Ok(()) => finished += 1,
            Err(_) => break,
        }
    }
    let free_after = finished == ROLES.len() && {
        let (tx, got) = channel::<()>();
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let t = shared.lock.lock_exclusive();
            // SAFETY: granted just above.
            unsafe { shared.lock.unlock_exclusive(t) };
            let _ = tx.send(());
        });
        got.recv_timeout(GRACE).is_ok()
    };
    Report {
        free_after,
        overlaps: shared.overlaps.load(Ordering::Relaxed),
        first_overlap: shared.first.lock().unwrap().clone(),
        writer_turns: writers
            .iter()
            .map(|&w| turns[w].load(Ordering::Relaxed))
            .collect(),
        stuck: ROLES.len() - finished,
    }
}
