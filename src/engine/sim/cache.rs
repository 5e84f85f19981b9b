//! The cache-line model: what a lock-word access costs, and who is watching
//! a line for a change.
//!
//! Each atomic word a lock uses is one line (the locks keep one hot word per
//! line or pad: a word's address is its line's name, see `atomic.rs`). A line
//! has at most one CPU holding it exclusively (after a write) or a set of
//! CPUs sharing it (after reads), a CPU it was last fetched from, a version
//! bumped by every write, and the time until which the interconnect is busy
//! moving it:
//!
//! - a read by a CPU that holds the line is a hit (`hit_ns`), and occupies
//!   nothing;
//! - a read by any other CPU moves the line from where it is (the transfer
//!   cost of that distance, `die_ns` ... `remote_ns`, or `memory_ns` for a
//!   line no cache holds) and makes the reader a sharer;
//! - a write or read-modify-write by the CPU that holds the line alone costs
//!   `hit_ns` or `atomic_ns`; by any other CPU it first moves the line
//!   (invalidating every sharer in the same round) and then does the atomic;
//! - moves of one line happen one at a time: each starts when the line is
//!   free (`busy_until`) and keeps it busy until done. So after a ticket
//!   release, k spinners re-reading the line are served one after another,
//!   and the one whose ticket is next waits on average for half of the
//!   others: the handoff cost `s + c*k/2` of Boyd-Wickizer et al. (2012)
//!   comes out of this rule, it is not written in anywhere;
//! - a write does not queue behind reads that have not started: it is served
//!   right after the move in flight, and the reads still queued are served
//!   after it and see its value (they re-request a line the write
//!   invalidated). So the next holder's release is not held back by the
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

/// How an access uses the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// A LOCK-prefixed read-modify-write (x86 takes the line exclusive for a
    /// failed CMPXCHG too, so a failed CAS is one of these).
    Rmw,
}

/// One line's coherence state.
#[derive(Debug)]
struct Line {
    /// The CPU holding the line exclusively (after a write), if any.
    owner: Option<u16>,
    /// CPUs holding a shared copy (a bitset over CPU ids), owner excluded.
    sharers: Vec<u64>,
    /// Bumped by every write: a watcher's view is stale once it differs.
    version: u64,
    /// The interconnect is moving this line until then.
    busy_until: u64,
    /// Threads spinning on the line, with the wait generation they registered in.
    watchers: Vec<(u32, u32)>,
    /// Reads moving the line or queued to, by start.
    reads: VecDeque<Read>,
    /// When the latest write's move ends (writes never overtake writes).
    writes_until: u64,
}

/// One read's move of a line.
#[derive(Clone, Copy, Debug)]
struct Read {
    tid: u32,
    cpu: u16,
    start: u64,
    end: u64,
}

impl Line {
    fn new(cpus: usize) -> Line {
        Line {
            owner: None,
            sharers: vec![0; cpus.div_ceil(64)],
            version: 0,
            busy_until: 0,
            watchers: Vec::new(),
            reads: VecDeque::new(),
            writes_until: 0,
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
        let sharers = self.sharers.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i * 64 + b)
        });
        self.owner
            .map(usize::from)
            .into_iter()
            .chain(sharers)
            .filter(move |&c| c != cpu)
    }
}

/// The outcome of one access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    /// When the access completes (the accessing thread's clock moves here).
    pub at: u64,
    /// Whether the access moved the line (a miss).
    pub moved: bool,
    /// The line's version the access saw (after it, for a write).
    pub version: u64,
    /// Queued reads a write went ahead of: (thread, new completion time).
    pub delayed: Vec<(u32, u64)>,
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

/// Every line any simulated CPU has touched.
pub struct Lines {
    cpus: usize,
    topology: Topology,
    costs: LineCosts,
    lines: FxHashMap<LineId, Line>,
}

impl Lines {
    pub fn new(cpus: usize, topology: Topology, costs: LineCosts) -> Lines {
        Lines {
            cpus,
            topology,
            costs,
            lines: FxHashMap::default(),
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
        self.topology.distance(a, b)
    }

    fn line(&mut self, id: LineId) -> &mut Line {
        let cpus = self.cpus;
        self.lines.entry(id).or_insert_with(|| Line::new(cpus))
    }

    /// Thread `tid` on `cpu` accesses line `id` at time `now`: apply the
    /// coherence change and say when the access completes.
    pub fn access(&mut self, id: LineId, cpu: usize, tid: u32, kind: Access, now: u64) -> Done {
        let Lines {
            cpus,
            topology,
            costs,
            lines,
        } = self;
        let line = lines.entry(id).or_insert_with(|| Line::new(*cpus));
        let local = match kind {
            Access::Read => line.holds(cpu),
            Access::Write | Access::Rmw => line.exclusive_to(cpu),
        };
        let op = match kind {
            Access::Rmw => costs.atomic,
            Access::Read | Access::Write => costs.hit,
        };
        if local {
            if kind != Access::Read {
                line.version += 1;
            }
            return Done {
                at: now + op,
                moved: false,
                version: line.version,
                delayed: Vec::new(),
            };
        }
        // The data comes from the exclusive owner or from a sharer (the
        // nearest), or from memory if no cache holds it; a write must also
        // invalidate every other copy, in one round to the farthest.
        let distances = |line: &Line| {
            let mut near: Option<Distance> = None;
            let mut far: Option<Distance> = None;
            for c in line.other_holders(cpu) {
                let d = topology.distance(cpu, c);
                near = Some(near.map_or(d, |n| n.min(d)));
                far = Some(far.map_or(d, |f| f.max(d)));
            }
            (near, far)
        };
        let (near, far) = distances(line);
        let data = if line.holds(cpu) {
            0
        } else {
            near.map_or(costs.memory, |d| costs.transfer(d))
        };
        let xfer = match kind {
            Access::Read => data,
            Access::Write | Access::Rmw => data.max(far.map_or(0, |d| costs.transfer(d))),
        };
        while line.reads.front().is_some_and(|r| r.end <= now) {
            line.reads.pop_front();
        }
        if kind == Access::Read {
            let start = now.max(line.busy_until);
            let at = start + xfer;
            line.busy_until = at;
            line.reads.push_back(Read {
                tid,
                cpu: cpu as u16,
                start,
                end: at,
            });
            if let Some(o) = line.owner.take() {
                set(&mut line.sharers, o as usize);
            }
            set(&mut line.sharers, cpu);
            return Done {
                at,
                moved: true,
                version: line.version,
                delayed: Vec::new(),
            };
        }
        // A write: after the moves in flight, ahead of the reads not started.
        let in_flight = line
            .reads
            .iter()
            .filter(|r| r.start <= now)
            .map(|r| r.end)
            .max()
            .unwrap_or(0);
        let start = now.max(line.writes_until).max(in_flight);
        let at = start + xfer + if kind == Access::Rmw { op } else { 0 };
        line.writes_until = at;
        line.version += 1;
        line.sharers.iter_mut().for_each(|w| *w = 0);
        // The reads it went ahead of move the line from the writer, one after
        // another, and end up sharing it with the writer.
        let overtaken: Vec<Read> = line
            .reads
            .iter()
            .copied()
            .filter(|r| r.start >= start)
            .collect();
        line.reads.retain(|r| r.start < start);
        let mut busy = at;
        let mut delayed = Vec::with_capacity(overtaken.len());
        for r in &overtaken {
            let end = busy + costs.transfer(topology.distance(r.cpu as usize, cpu));
            line.reads.push_back(Read {
                start: busy,
                end,
                ..*r
            });
            set(&mut line.sharers, r.cpu as usize);
            delayed.push((r.tid, end));
            busy = end;
        }
        if overtaken.is_empty() {
            line.owner = Some(cpu as u16);
        } else {
            line.owner = None;
            set(&mut line.sharers, cpu);
        }
        line.busy_until = busy;
        Done {
            at,
            moved: true,
            version: line.version,
            delayed,
        }
    }

    /// The line's version now (0 for a line never written).
    pub fn version(&self, id: LineId) -> u64 {
        self.lines.get(&id).map_or(0, |l| l.version)
    }

    /// Register thread `tid` (wait generation `gen`) as spinning on `id`.
    pub fn watch(&mut self, id: LineId, tid: u32, generation: u32) {
        self.line(id).watchers.push((tid, generation));
    }

    /// Take the watchers of `id` (after a write to it), in registration
    /// order; the caller puts them in the interconnect's order.
    pub fn take_watchers(&mut self, id: LineId) -> Vec<(u32, u32)> {
        self.lines
            .get_mut(&id)
            .map(|l| std::mem::take(&mut l.watchers))
            .unwrap_or_default()
    }
}

fn set(bits: &mut [u64], cpu: usize) {
    bits[cpu / 64] |= 1 << (cpu % 64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(cpus: usize) -> Lines {
        let topology = Topology {
            sockets: 2,
            dies_per_socket: 1,
            cores_per_die: 4,
            threads_per_core: 1,
        };
        let costs = LineCosts {
            hit: 1_000,
            atomic: 5_000,
            memory: 80_000,
            by_distance: [1_000, 7_000, 40_000, 60_000, 130_000],
            service: LineService::Random,
        };
        Lines::new(cpus, topology, costs)
    }

    #[test]
    fn a_cold_line_comes_from_memory_then_hits() {
        let mut l = lines(8);
        let first = l.access(0x40, 0, 0, Access::Read, 0);
        assert_eq!((first.at, first.moved), (80_000, true));
        let again = l.access(0x40, 0, 0, Access::Read, first.at);
        assert_eq!((again.at, again.moved), (first.at + 1_000, false));
    }

    #[test]
    fn an_rmw_on_an_owned_line_is_local_and_on_a_shared_one_moves_it() {
        let mut l = lines(8);
        let a = l.access(0x40, 0, 0, Access::Rmw, 0);
        let local = l.access(0x40, 0, 0, Access::Rmw, a.at);
        assert_eq!(local.at - a.at, 5_000, "owned: just the atomic");
        // CPU 1 (same die) reads it: one die transfer; now both share it.
        let r = l.access(0x40, 1, 1, Access::Read, local.at);
        assert_eq!(r.at - local.at, 40_000);
        // CPU 0 writes again: it shares the line with 1, so it must move it.
        let w = l.access(0x40, 0, 0, Access::Rmw, r.at);
        assert!(w.moved && w.version == 3);
        // CPU 4 is on the other socket: a remote transfer.
        let far = l.access(0x40, 4, 4, Access::Read, w.at);
        assert_eq!(far.at - w.at, 130_000);
    }

    #[test]
    fn moves_of_one_line_are_served_one_at_a_time() {
        let mut l = lines(8);
        let w = l.access(0x40, 0, 0, Access::Write, 0);
        // Three CPUs of the die re-read the written line at the same instant:
        // the k-th completes after k transfers.
        let done: Vec<u64> = (1..4)
            .map(|cpu| l.access(0x40, cpu, cpu as u32, Access::Read, w.at).at - w.at)
            .collect();
        assert_eq!(done, vec![40_000, 80_000, 120_000]);
        // A sharer's own re-read is a hit and waits for nothing.
        let hit = l.access(0x40, 2, 2, Access::Read, w.at);
        assert_eq!(hit.at - w.at, 1_000);
    }

    #[test]
    fn a_write_goes_ahead_of_reads_not_started_and_they_see_it() {
        let mut l = lines(8);
        let w = l.access(0x40, 0, 0, Access::Write, 0);
        // Three reads queue: the first is in flight until +40 ns.
        let reads: Vec<u64> = (1..4)
            .map(|cpu| l.access(0x40, cpu, cpu as u32, Access::Read, w.at).at)
            .collect();
        // CPU 0 writes 10 ns in: it waits for the read in flight, not the others.
        let w2 = l.access(0x40, 0, 0, Access::Rmw, w.at + 10_000);
        assert_eq!(w2.at, reads[0] + 40_000 + 5_000);
        // The two reads not started are served after it, from CPU 0.
        assert_eq!(w2.delayed, vec![(2, w2.at + 40_000), (3, w2.at + 80_000)]);
    }

    #[test]
    fn a_write_invalidates_every_sharer_and_bumps_the_version() {
        let mut l = lines(128);
        for cpu in [3, 70, 127] {
            l.access(0x80, cpu, cpu as u32, Access::Read, 0);
        }
        let v = l.version(0x80);
        l.access(0x80, 5, 5, Access::Rmw, 1_000_000);
        assert_eq!(l.version(0x80), v + 1);
        for cpu in [3, 70, 127] {
            assert!(
                l.access(0x80, cpu, cpu as u32, Access::Read, 2_000_000)
                    .moved,
                "{cpu}"
            );
        }
    }

    #[test]
    fn watchers_are_taken_once() {
        let mut l = lines(8);
        l.watch(0x40, 1, 0);
        l.watch(0x40, 2, 7);
        assert_eq!(l.take_watchers(0x40), vec![(1, 0), (2, 7)]);
        assert!(l.take_watchers(0x40).is_empty());
        assert!(l.take_watchers(0x99).is_empty());
    }
}
