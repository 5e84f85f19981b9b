//! The event queue: which simulated thread runs next, and when.
//!
//! A min-heap of (virtual time, sequence number, thread, generation): the
//! earliest time first, and among equal times the one pushed first, so a run
//! is deterministic and FIFO among simultaneous events. A thread's pending
//! event is cancelled by bumping the thread's generation (lazy deletion): the
//! stale entry is skipped when popped. Measured on this machine before the
//! simulator was written (a BinaryHeap of this shape resuming 256 coroutines):
//! 17-18 M events/s on one core, as fast as the bare heap loop.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One scheduled resumption.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Event {
    /// Virtual time, picoseconds.
    pub at: u64,
    seq: u64,
    pub tid: u32,
    /// The thread's generation when this was pushed.
    pub generation: u32,
    /// A timer that wakes a sleeping thread, rather than a resumption.
    pub wake: bool,
}

#[derive(Debug, Default)]
pub struct Events {
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
}

impl Events {
    /// Resume `tid` at `at`, if its generation is still `generation` then.
    pub fn push(&mut self, at: u64, tid: u32, generation: u32) {
        self.insert(at, tid, generation, false);
    }

    /// Wake the sleeping `tid` at `at`, if it still sleeps in `generation`.
    pub fn push_wake(&mut self, at: u64, tid: u32, generation: u32) {
        self.insert(at, tid, generation, true);
    }

    fn insert(&mut self, at: u64, tid: u32, generation: u32, wake: bool) {
        self.seq += 1;
        self.heap.push(Reverse(Event {
            at,
            seq: self.seq,
            tid,
            generation,
            wake,
        }));
    }

    /// The earliest pending time (stale entries included: they only make a
    /// thread yield once more than it had to).
    #[inline]
    pub fn next_at(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.0.at)
    }

    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop().map(|e| e.0)
    }

    /// Events pushed so far.
    pub fn pushed(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_among_equal_times() {
        let mut q = Events::default();
        q.push(20, 1, 0);
        q.push(10, 2, 0);
        q.push(20, 3, 0);
        q.push(10, 4, 0);
        assert_eq!(q.next_at(), Some(10));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.tid).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(q.pushed(), 4);
    }
}
