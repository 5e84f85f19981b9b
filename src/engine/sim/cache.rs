//! The cache-line model: what a lock-word access costs, and who is watching
//! a line for a change.
//!
//! Each atomic word a lock uses is one line (the locks keep one hot word per
//! line or pad: a word's address is its line's name, see `platform.rs`). A
//! line has at most one CPU holding it exclusively (after a write) or a set
//! of CPUs sharing it (after reads), the CPU a reader gets it from, a version
//! bumped by every write that lands, and the time until which the
//! interconnect is busy moving it:
//!
//! - a read by a CPU that holds the line is a hit (`hit_ns`), and occupies
//!   nothing;
//! - a read by any other CPU moves the line from the CPU that last wrote it
//!   (the transfer cost of that distance, `smt_ns` ... `remote_ns`, or
//!   `memory_ns` for a line no cache holds) and makes the reader a sharer;
//! - a write or read-modify-write by the CPU that holds the line alone costs
//!   `hit_ns` or `atomic_ns`; by any other CPU it first moves the line
//!   (invalidating every sharer in the same round) and then does the atomic;
//! - moves of one line happen one at a time: each starts when the one before
//!   it is done and keeps the line busy until it is. So after a ticket
//!   release, k spinners re-reading the line are served one after another,
//!   and the one whose ticket is next waits on average for half of the
//!   others: the handoff cost `s + c*k/2` of Boyd-Wickizer et al. (2012)
//!   comes out of this rule, it is not written in anywhere;
//! - a write does not queue behind reads that have not started: the line
//!   serves its queued writes before its queued reads, so a write is served
//!   right after the move in flight, and the reads still queued are served
//!   after it and see its value. So the next holder's release is not held back by the
//!   re-reads of spinners that already lost: the assumption under which
//!   Boyd-Wickizer et al.'s model matched their measurements, and the reason
//!   its service time has `c*k/2` and not `c*k`;
//! - an access that moves the line completes, and takes or changes the
//!   value, when the move is done: a read queued behind a write sees the
//!   write.
//!
//! A spinning CPU does not re-read an unchanged line in a loop: it registers
//! as a watcher of the lines it read and is woken when one is written; the
//! order in which woken watchers are served is the interconnect's
//! ([`LineService`]), not the order they started watching.
//!
//! All times are picoseconds of virtual time.

use crate::model::machine::{CacheCosts, Distance, LineService, Topology};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A line's name: the address of the atomic word.
pub type LineId = usize;

/// Where a line's state is kept: looked up once per access by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(u32);

/// How an access uses the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// A LOCK-prefixed read-modify-write (x86 takes the line exclusive for a
    /// failed CMPXCHG too, so a failed CAS is one of these).
    Rmw,
}

/// One line's coherence state, and its queue of moves.
#[derive(Debug)]
struct Line {
    /// The CPU holding the line exclusively (after a write), if any.
    owner: Option<u16>,
    /// CPUs holding a shared copy (a bitset over CPU ids), owner excluded.
    sharers: Vec<u64>,
    /// Where a reader gets the data from: the CPU that wrote it last (its
    /// copy stays valid, shared, until the next write), or the first CPU
    /// that fetched a never-written line; None while no cache holds it.
    source: Option<u16>,
    /// Bumped when a write's value lands ([`Lines::written`]): a spinner's
    /// view is stale once it differs.
    version: u64,
    /// A move of the line is in flight (until its requester completes it).
    busy: bool,
    /// Moves waiting for the line: writes are served before reads.
    writes: VecDeque<Request>,
    reads: VecDeque<Request>,
    /// Threads spinning on the line, with the spin (a thread's count of its
    /// spins) they registered in.
    watchers: Vec<(u32, u32)>,
}

/// A thread waiting to move a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    tid: u32,
    cpu: u16,
    kind: Access,
}

impl Line {
    fn new(cpus: usize) -> Line {
        Line {
            owner: None,
            sharers: vec![0; cpus.div_ceil(64)],
            source: None,
            version: 0,
            busy: false,
            writes: VecDeque::new(),
            reads: VecDeque::new(),
            watchers: Vec::new(),
        }
    }

    fn shares(&self, cpu: usize) -> bool {
        self.sharers[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    fn holds(&self, cpu: usize) -> bool {
        self.owner == Some(cpu as u16) || self.shares(cpu)
    }

    /// Held by `cpu` and nobody else.
    fn exclusive_to(&self, cpu: usize) -> bool {
        self.owner == Some(cpu as u16) && self.sharers.iter().all(|&w| w == 0)
    }

    /// Every CPU holding the line but `cpu`.
    fn other_holders(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        let sharers = self.sharers.iter().enumerate().flat_map(|(i, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    i * 64 + b
                })
            })
        });
        self.owner
            .map(usize::from)
            .into_iter()
            .chain(sharers)
            .filter(move |&c| c != cpu)
    }
}

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The line is here (held, or owned for a write): done at `at`.
    Hit { at: u64 },
    /// The line moves to the requester now; done at `at`, when the requester
    /// must call [`Lines::completed`].
    Moving { at: u64 },
    /// The line is busy: the request waits its turn, and a later
    /// [`Lines::completed`] starts it.
    Queued,
}

/// Costs of the model in picoseconds, from the machine profile.
#[derive(Clone, Debug)]
pub struct LineCosts {
    hit: u64,
    atomic: u64,
    memory: u64,
    by_distance: [u64; 5],
    pub service: LineService,
}

/// Nanoseconds (a profile's unit) to picoseconds.
pub fn ps(ns: f64) -> u64 {
    (ns * 1_000.0).round() as u64
}

impl LineCosts {
    pub fn new(c: &CacheCosts) -> LineCosts {
        let d = |d| ps(c.transfer_ns(d));
        LineCosts {
            hit: ps(c.hit_ns),
            atomic: ps(c.atomic_ns),
            memory: ps(c.memory_ns),
            by_distance: [
                d(Distance::SameCpu),
                d(Distance::Smt),
                d(Distance::Die),
                d(Distance::Socket),
                d(Distance::Remote),
            ],
            service: c.line_service,
        }
    }

    fn transfer(&self, d: Distance) -> u64 {
        self.by_distance[d as usize]
    }
}

/// Each CPU's core, die and socket, worked out once from the topology (the
/// cost model asks for a distance on every move).
struct Places {
    of: Vec<(u32, u32, u32)>,
}

impl Places {
    fn new(t: &Topology, cpus: usize) -> Places {
        let core = t.threads_per_core as usize;
        let die = core * t.cores_per_die as usize;
        let socket = die * t.dies_per_socket as usize;
        Places {
            of: (0..cpus)
                .map(|c| ((c / core) as u32, (c / die) as u32, (c / socket) as u32))
                .collect(),
        }
    }

    /// As [`Topology::distance`], from the table.
    #[inline]
    fn distance(&self, a: usize, b: usize) -> Distance {
        let (x, y) = (self.of[a], self.of[b]);
        if a == b {
            Distance::SameCpu
        } else if x.0 == y.0 {
            Distance::Smt
        } else if x.1 == y.1 {
            Distance::Die
        } else if x.2 == y.2 {
            Distance::Socket
        } else {
            Distance::Remote
        }
    }
}

/// Every line any simulated CPU has touched.
pub struct Lines {
    cpus: usize,
    places: Places,
    costs: LineCosts,
    slots: FxHashMap<LineId, Slot>,
    lines: Vec<Line>,
}

impl Lines {
    pub fn new(cpus: usize, topology: Topology, costs: LineCosts) -> Lines {
        Lines {
            cpus,
            places: Places::new(&topology, cpus),
            costs,
            slots: FxHashMap::default(),
            lines: Vec::new(),
        }
    }

    pub fn costs(&self) -> &LineCosts {
        &self.costs
    }

    /// Lines touched so far.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn distance(&self, a: usize, b: usize) -> Distance {
        self.places.distance(a, b)
    }

    /// The slot of the line named `id`, made on its first use.
    pub fn slot(&mut self, id: LineId) -> Slot {
        let (cpus, lines) = (self.cpus, &mut self.lines);
        *self.slots.entry(id).or_insert_with(|| {
            lines.push(Line::new(cpus));
            Slot(lines.len() as u32 - 1)
        })
    }

    /// Forget which line `id` names: its next use makes a new one (the
    /// old line stays, unnamed, as a freed word's line would go cold).
    pub fn forget(&mut self, id: LineId) {
        self.slots.remove(&id);
    }

    fn line(&mut self, slot: Slot) -> &mut Line {
        &mut self.lines[slot.0 as usize]
    }

    /// Thread `tid` on `cpu` accesses line `id` at time `now`.
    pub fn access(&mut self, id: Slot, cpu: usize, tid: u32, kind: Access, now: u64) -> Outcome {
        let line = self.line(id);
        let local = match kind {
            Access::Read => line.holds(cpu),
            Access::Write | Access::Rmw => line.exclusive_to(cpu),
        };
        if local {
            let op = if kind == Access::Rmw {
                self.costs.atomic
            } else {
                self.costs.hit
            };
            return Outcome::Hit { at: now + op };
        }
        let req = Request {
            tid,
            cpu: cpu as u16,
            kind,
        };
        if line.busy {
            match kind {
                Access::Read => line.reads.push_back(req),
                Access::Write | Access::Rmw => line.writes.push_back(req),
            }
            return Outcome::Queued;
        }
        Outcome::Moving {
            at: self.start(id, req, now),
        }
    }

    /// The move in flight of line `id` completed at `now` (its requester has
    /// taken or changed the value): start the next one, writes first, and
    /// say whose it is and when it completes.
    pub fn completed(&mut self, id: Slot, now: u64) -> Option<(u32, u64)> {
        let line = self.line(id);
        line.busy = false;
        let next = line.writes.pop_front().or_else(|| line.reads.pop_front())?;
        Some((next.tid, self.start(id, next, now)))
    }

    /// Move line `id` for `req` from `now`: the coherence change happens
    /// now, the move completes at the returned time.
    fn start(&mut self, id: Slot, req: Request, now: u64) -> u64 {
        let Lines {
            places,
            costs,
            lines,
            ..
        } = self;
        let line = &mut lines[id.0 as usize];
        let cpu = req.cpu as usize;
        line.busy = true;
        // The data comes from where it was last written (or memory, if no
        // cache holds it); a write must also invalidate every other copy, in
        // one round to the farthest.
        let data = if line.holds(cpu) {
            0
        } else {
            line.source.map_or(costs.memory, |c| {
                costs.transfer(places.distance(cpu, c as usize))
            })
        };
        match req.kind {
            Access::Read => {
                if let Some(o) = line.owner.take() {
                    set(&mut line.sharers, o as usize);
                }
                set(&mut line.sharers, cpu);
                line.source.get_or_insert(req.cpu);
                now + data
            }
            Access::Write | Access::Rmw => {
                let invalidate = line
                    .other_holders(cpu)
                    .map(|c| places.distance(cpu, c))
                    .max()
                    .map_or(0, |far| costs.transfer(far));
                line.sharers.iter_mut().for_each(|w| *w = 0);
                line.owner = Some(req.cpu);
                line.source = Some(req.cpu);
                let op = if req.kind == Access::Rmw {
                    costs.atomic
                } else {
                    0
                };
                now + data.max(invalidate) + op
            }
        }
    }

    /// A write's value landed in `id` (the writer applied it when its move
    /// completed): bump the version and hand over the line's spinners, in
    /// registration order (the caller puts them in the interconnect's order).
    pub fn written(&mut self, id: Slot) -> std::vec::Drain<'_, (u32, u32)> {
        let line = self.line(id);
        line.version += 1;
        line.watchers.drain(..)
    }

    /// The line's version now (0 for a line never written).
    pub fn version(&self, id: Slot) -> u64 {
        self.lines[id.0 as usize].version
    }

    /// Register thread `tid` (in its spin number `spin`) as spinning on `id`.
    pub fn watch(&mut self, id: Slot, tid: u32, spin: u32) {
        self.line(id).watchers.push((tid, spin));
    }
}

fn set(bits: &mut [u64], cpu: usize) {
    bits[cpu / 64] |= 1 << (cpu % 64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology() -> Topology {
        Topology {
            sockets: 2,
            dies_per_socket: 1,
            cores_per_die: 4,
            threads_per_core: 1,
        }
    }

    fn lines(cpus: usize) -> Lines {
        let costs = LineCosts {
            hit: 1_000,
            atomic: 5_000,
            memory: 80_000,
            by_distance: [1_000, 7_000, 40_000, 60_000, 130_000],
            service: LineService::Random,
        };
        Lines::new(cpus, topology(), costs)
    }

    /// Access and, for a move, complete it at once (nothing else queued):
    /// the time the access is done.
    fn done(l: &mut Lines, id: LineId, cpu: usize, kind: Access, now: u64) -> u64 {
        let id = l.slot(id);
        match l.access(id, cpu, cpu as u32, kind, now) {
            Outcome::Hit { at } => at,
            Outcome::Moving { at } => {
                assert_eq!(l.completed(id, at), None, "nothing was queued");
                at
            }
            Outcome::Queued => panic!("the line was busy"),
        }
    }

    #[test]
    fn a_cold_line_comes_from_memory_then_hits() {
        let mut l = lines(8);
        let s40 = l.slot(0x40);
        assert_eq!(
            l.access(s40, 0, 0, Access::Read, 0),
            Outcome::Moving { at: 80_000 }
        );
        l.completed(s40, 80_000);
        assert_eq!(
            l.access(s40, 0, 0, Access::Read, 80_000),
            Outcome::Hit { at: 81_000 }
        );
    }

    #[test]
    fn an_rmw_on_an_owned_line_is_local_and_on_a_shared_one_moves_it() {
        let mut l = lines(8);
        let a = done(&mut l, 0x40, 0, Access::Rmw, 0);
        let local = done(&mut l, 0x40, 0, Access::Rmw, a);
        assert_eq!(local - a, 5_000, "owned: just the atomic");
        // CPU 1 (same die) reads it: one die transfer; now both share it.
        let r = done(&mut l, 0x40, 1, Access::Read, local);
        assert_eq!(r - local, 40_000);
        // CPU 0 writes again: it shares the line with 1, so it must
        // invalidate 1's copy first (one die transfer) and then do the atomic.
        let w = done(&mut l, 0x40, 0, Access::Rmw, r);
        assert_eq!(w - r, 40_000 + 5_000);
        // CPU 4 is on the other socket: a remote transfer.
        let far = done(&mut l, 0x40, 4, Access::Read, w);
        assert_eq!(far - w, 130_000);
    }

    #[test]
    fn moves_of_one_line_are_served_one_at_a_time_writes_first() {
        let mut l = lines(8);
        let s40 = l.slot(0x40);
        let w = done(&mut l, 0x40, 0, Access::Write, 0);
        // CPUs 1, 2, 3 re-read the written line at once: 1 moves it, 2 and 3 queue.
        assert_eq!(
            l.access(s40, 1, 1, Access::Read, w),
            Outcome::Moving { at: w + 40_000 }
        );
        assert_eq!(l.access(s40, 2, 2, Access::Read, w), Outcome::Queued);
        assert_eq!(l.access(s40, 3, 3, Access::Read, w), Outcome::Queued);
        // CPU 0 writes while 1's read is in flight: it goes ahead of 2 and 3.
        assert_eq!(
            l.access(s40, 0, 0, Access::Rmw, w + 10_000),
            Outcome::Queued
        );
        let one = w + 40_000;
        // 0 shares the line with 1 by then: invalidating 1 is one die round.
        assert_eq!(l.completed(s40, one), Some((0, one + 40_000 + 5_000)));
        let zero = one + 45_000;
        assert_eq!(l.completed(s40, zero), Some((2, zero + 40_000)));
        assert_eq!(l.completed(s40, zero + 40_000), Some((3, zero + 80_000)));
        assert_eq!(l.completed(s40, zero + 80_000), None);
        // A sharer's own re-read is a hit and waits for nothing.
        assert_eq!(
            l.access(s40, 2, 2, Access::Read, zero + 80_000),
            Outcome::Hit { at: zero + 81_000 }
        );
    }

    #[test]
    fn a_write_invalidates_every_sharer_in_one_round_to_the_farthest() {
        let mut l = lines(128);
        let s80 = l.slot(0x80);
        let mut t = 0;
        for cpu in [3, 70, 127] {
            t = done(&mut l, 0x80, cpu, Access::Read, t);
        }
        // CPU 5 (socket 1) writes: 3 is on socket 0, so the round is remote.
        assert_eq!(done(&mut l, 0x80, 5, Access::Rmw, t) - t, 130_000 + 5_000);
        for cpu in [3, 70, 127] {
            assert!(
                matches!(
                    l.access(s80, cpu, cpu as u32, Access::Read, t + 200_000),
                    Outcome::Moving { .. } | Outcome::Queued
                ),
                "{cpu} still hits after the write"
            );
        }
    }

    #[test]
    fn a_landed_write_bumps_the_version_and_hands_over_the_watchers_once() {
        let mut l = lines(8);
        let (s40, s99) = (l.slot(0x40), l.slot(0x99));
        l.watch(s40, 1, 0);
        l.watch(s40, 2, 7);
        assert_eq!(l.version(s40), 0);
        assert_eq!(l.written(s40).collect::<Vec<_>>(), vec![(1, 0), (2, 7)]);
        assert_eq!(l.version(s40), 1);
        assert_eq!(l.written(s40).next(), None);
        assert_eq!(l.written(s99).next(), None);
    }

    #[test]
    fn places_agree_with_the_profile_topology() {
        let l = lines(8);
        for a in 0..8 {
            for b in 0..8 {
                assert_eq!(l.distance(a, b), topology().distance(a, b), "{a} {b}");
            }
        }
    }
}
