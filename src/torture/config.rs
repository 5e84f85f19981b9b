//! What one torture run does: the lock, how many threads of each role, how long,
//! and the per-iteration timing.

use crate::engine::sim::SimSpec;
use crate::locks::LockKind;
use std::time::Duration;

/// A torture thread's job, fixed for the whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// down_read / up_read (synchro-test `rd`, locktorture's readers).
    Reader,
    /// down_write / up_write (synchro-test `wr`, locktorture's writers).
    Writer,
    /// down_write, downgrade_write, up_read (synchro-test `dg`). Kinds without a
    /// downgrade (`!HAS_DOWNGRADE`) just write.
    Downgrader,
    /// down_read_critical / up_read (Lespinasse 2010, seed 002).
    CriticalReader,
}

impl Role {
    /// Every role, in the order threads are numbered and tables list them.
    pub const ALL: [Role; 4] = [
        Role::Reader,
        Role::Writer,
        Role::Downgrader,
        Role::CriticalReader,
    ];

    /// The plural name used in tables (and, dashed, by the CLI flag).
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "readers",
            Role::Writer => "writers",
            Role::Downgrader => "downgraders",
            Role::CriticalReader => "critical readers",
        }
    }

    /// Whether the role's acquisitions are write acquisitions: such threads are
    /// summed on locktorture's `Writes:` line, the others on `Reads :`.
    pub fn writes(self) -> bool {
        matches!(self, Role::Writer | Role::Downgrader)
    }
}

/// A validated torture run.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub kind: LockKind,
    /// Threads per role, indexed by `Role as usize`.
    pub threads: [usize; 4],
    /// How long threads keep acquiring before the stop flag.
    pub duration: Duration,
    /// Hold time per acquisition (synchro-test `load`).
    pub load: Duration,
    /// Pause after each release (synchro-test `interval`).
    pub interval: Duration,
    /// sched_yield after each release (synchro-test `do_sched`).
    pub sched: bool,
    /// Draw each hold and pause from an exponential distribution of mean
    /// `load` / `interval` (the analytical models' assumption) instead of
    /// fixed times.
    pub exponential: bool,
    /// Seeds the drawn times (and the simulator).
    pub seed: u64,
    /// Where it runs: real threads, or the simulator's virtual CPUs.
    pub engine: Engine,
}

/// Where a torture run runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Engine {
    /// This machine's threads.
    Native,
    /// Virtual CPUs of a machine profile.
    Sim(Box<SimSpec>),
}

impl Config {
    /// Most threads one run may start, over all roles. synchro-test allowed 64
    /// per role (MAX_THREADS); 4096 covers the largest machines the users run
    /// locktorture on while keeping the run's memory (one small stack, one
    /// histogram per thread) well under a gigabyte.
    pub const MAX_THREADS: usize = 4096;
    /// Longest `load` and `interval`, microseconds: synchro-test's own limit
    /// (`load > 999 || interval > 999` is "Parameter out of range").
    pub const MAX_DELAY_US: u64 = 999;

    pub fn threads(&self, role: Role) -> usize {
        self.threads[role as usize]
    }

    pub fn total_threads(&self) -> usize {
        self.threads.iter().sum()
    }

    /// The role of each thread, by thread number: all readers first, then
    /// writers, downgraders and critical readers (the order of [`Role::ALL`]).
    pub fn thread_roles(&self) -> Vec<Role> {
        Role::ALL
            .iter()
            .flat_map(|&r| std::iter::repeat_n(r, self.threads(r)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_numbered_role_by_role() {
        let cfg = Config {
            kind: LockKind::Rwsem,
            threads: [2, 1, 0, 1],
            duration: Duration::from_millis(1),
            load: Duration::ZERO,
            interval: Duration::ZERO,
            sched: false,
            exponential: false,
            seed: 0,
            engine: crate::torture::Engine::Native,
        };
        assert_eq!(cfg.total_threads(), 4);
        assert_eq!(
            cfg.thread_roles(),
            [
                Role::Reader,
                Role::Reader,
                Role::Writer,
                Role::CriticalReader
            ]
        );
    }
}
