//! Which tasks are alive, where, and who is using each mm.
//!
//! The task count stays steady: fork-exit replaces the task at one roster
//! position with a fresh child of the same ancestor, then exits the old one.
//! Roles that work on "any task" pick a random position. An mm being used by a
//! role holds a user reference (the kernel's `mm_users`, mmget/mmput); exit
//! marks the mm dying, refuses new users and waits for the old ones to leave,
//! so no operation runs on an mm that is being torn down.

use crate::locks::platform::Platform;
use crate::rmap::ids::MmId;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// A roster position whose task is being replaced.
const BUSY: u32 = u32::MAX;
/// In a users word: the mm is exiting; no new users.
const DYING: u32 = 1 << 31;
/// How long an exiting mm's owner pauses between looks at its users: a
/// microsecond, a few operations of the roles holding it (the users word is
/// the model's, not a kernel word, so it is not a line the simulator models
/// and a simulated waiter must let its clock run).
const EXIT_WAIT_NS: u64 = 1_000;

pub struct Roster {
    /// The task at each position (BUSY while fork-exit swaps it).
    tasks: Box<[AtomicU32]>,
    /// The ancestor each position's tasks are forked from.
    parents: Box<[MmId]>,
    /// Positions of descendants: the only ones fork-exit replaces.
    children: Box<[usize]>,
    /// Per mm slot: DYING | number of users.
    users: Box<[AtomicU32]>,
    /// fork-exit's round-robin hand over `children`.
    hand: AtomicUsize,
}

impl Roster {
    /// `tasks[i]` descends from (or is) `parents[i]`; `mm_slots` bounds mm ids.
    pub fn new(tasks: &[MmId], parents: &[MmId], mm_slots: usize) -> Roster {
        let children = (0..tasks.len())
            .filter(|&i| tasks[i] != parents[i])
            .collect();
        Roster {
            tasks: tasks.iter().map(|t| AtomicU32::new(t.0)).collect(),
            parents: parents.into(),
            children,
            users: (0..mm_slots).map(|_| AtomicU32::new(0)).collect(),
            hand: AtomicUsize::new(0),
        }
    }

    /// Roster positions: the model's task count.
    pub fn positions(&self) -> usize {
        self.tasks.len()
    }

    /// The first ancestor: the task at position 0.
    pub fn ancestor(&self) -> MmId {
        self.parents[0]
    }

    /// mmget the task at `position`; None if it is being replaced or exiting.
    pub fn get(&self, position: usize) -> Option<MmUser<'_>> {
        let id = self.tasks[position].load(Ordering::Acquire);
        (id != BUSY).then_some(())?;
        self.mmget(MmId(id))
    }

    /// mmget_not_zero: a user reference unless the mm is exiting.
    pub fn mmget(&self, mm: MmId) -> Option<MmUser<'_>> {
        let users = &self.users[mm.index()];
        let mut v = users.load(Ordering::Relaxed);
        loop {
            if v & DYING != 0 {
                return None;
            }
            match users.compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Some(MmUser { roster: self, mm }),
                Err(now) => v = now,
            }
        }
    }

    /// Claim the next descendant position for replacement: (position, old
    /// task, its ancestor). None when the world has no descendants.
    pub fn claim_child(&self) -> Option<(usize, MmId, MmId)> {
        if self.children.is_empty() {
            return None;
        }
        loop {
            let n = self.hand.fetch_add(1, Ordering::Relaxed) % self.children.len();
            let p = self.children[n];
            let old = self.tasks[p].swap(BUSY, Ordering::AcqRel);
            if old != BUSY {
                return Some((p, MmId(old), self.parents[p]));
            }
        }
    }

    /// Put a task at a claimed position (the new child, or the old task back
    /// if the fork failed). A new child's users word starts clean.
    pub fn publish(&self, position: usize, task: MmId) {
        self.users[task.index()].fetch_and(!DYING, Ordering::AcqRel);
        self.tasks[position].store(task.0, Ordering::Release);
    }

    /// Begin exit of `mm`: refuse new users, wait for the current ones
    /// (exit_mmap runs only after the last mmput). The wait gives the CPU
    /// away and pauses, on `P`'s CPU and clock.
    pub fn begin_exit<P: Platform>(&self, mm: MmId) {
        let users = &self.users[mm.index()];
        users.fetch_or(DYING, Ordering::AcqRel);
        while users.load(Ordering::Acquire) & !DYING != 0 {
            P::yield_now();
            P::udelay(EXIT_WAIT_NS);
        }
    }
}

/// A user reference to an mm; mmput on drop.
pub struct MmUser<'a> {
    roster: &'a Roster,
    pub mm: MmId,
}

impl Drop for MmUser<'_> {
    fn drop(&mut self) {
        self.roster.users[self.mm.index()].fetch_sub(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::platform::Native;

    fn roster() -> Roster {
        // Task 0 is the ancestor of 1 and 2.
        Roster::new(&[MmId(0), MmId(1), MmId(2)], &[MmId(0); 3], 8)
    }

    #[test]
    fn fork_exit_claims_only_descendants_and_never_twice() {
        let r = roster();
        let (p1, old1, parent) = r.claim_child().unwrap();
        let (p2, old2, _) = r.claim_child().unwrap();
        assert_eq!(parent, MmId(0));
        assert_ne!(p1, p2);
        assert!([old1, old2].iter().all(|t| *t != MmId(0)));
        assert!(r.get(p1).is_none(), "a claimed position is busy");
        r.publish(p1, MmId(5));
        assert_eq!(r.get(p1).unwrap().mm, MmId(5));
    }

    #[test]
    fn an_exiting_mm_takes_no_new_users_and_waits_for_old_ones() {
        let r = std::sync::Arc::new(roster());
        let user = r.mmget(MmId(1)).unwrap();
        let r2 = r.clone();
        let exiter = std::thread::spawn(move || r2.begin_exit::<Native>(MmId(1)));
        while r.mmget(MmId(1)).is_some() {
            std::thread::yield_now();
        }
        assert!(!exiter.is_finished(), "exit waits for the last mmput");
        drop(user);
        exiter.join().unwrap();
        // Reused for a new child: users start clean.
        r.publish(1, MmId(1));
        assert!(r.mmget(MmId(1)).is_some());
    }
}
