//! The event queue: which simulated thread runs next, and when.
//!
//! A min-heap of (virtual time, sequence number, thread, generation): the
//! earliest time first, and among equal times the one pushed first, so a run
//! is deterministic and FIFO among simultaneous events. A thread's pending
//! event is cancelled by bumping the thread's generation (lazy deletion): the
//! stale entry is skipped when popped. Measured on this machine before the
//! simulator was written (a BinaryHeap of this shape resuming 256 coroutines):
//! 17-18 M events/s on one core, as fast as the bare heap loop. Filling the
//! popped root with the next push (see [`Events`]) took the spinlock,
//! qspinlock and rwsem loops at 64 CPUs from 705, 822 and 948 to 678, 768
//! and 835 instructions per event (cachegrind, benches/sim.rs's cases).

/// One scheduled resumption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl Event {
    /// The order: time, then push order (`seq` is unique).
    #[inline]
    fn before(&self, other: &Event) -> bool {
        (self.at, self.seq) < (other.at, other.seq)
    }
}

/// A binary min-heap in a Vec, with one twist: the event [`Events::pop`]
/// returns stays at the root as a hole until the next push or pop. Almost
/// every event pushes its thread's next one, so that push fills the hole
/// with one sift-down, instead of a removal's sift-down plus an insertion's
/// sift-up (the queue was a fifth of the simulator's instructions).
#[derive(Debug, Default)]
pub struct Events {
    heap: Vec<Event>,
    /// The root is the event last popped, no longer pending.
    hole: bool,
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
        let ev = Event {
            at,
            seq: self.seq,
            tid,
            generation,
            wake,
        };
        if std::mem::take(&mut self.hole) {
            self.heap[0] = ev;
            self.sift_down(0);
        } else {
            self.heap.push(ev);
            self.sift_up(self.heap.len() - 1);
        }
    }

    /// The earliest pending time (stale entries included: they only make a
    /// thread yield once more than it had to).
    #[inline]
    pub fn next_at(&self) -> Option<u64> {
        if !self.hole {
            return self.heap.first().map(|e| e.at);
        }
        match self.heap.get(1..3) {
            Some([a, b]) => Some(if a.before(b) { a.at } else { b.at }),
            _ => self.heap.get(1).map(|e| e.at),
        }
    }

    pub fn pop(&mut self) -> Option<Event> {
        if std::mem::take(&mut self.hole) {
            let last = self.heap.pop().expect("a hole is in the heap");
            if self.heap.is_empty() {
                return None;
            }
            self.heap[0] = last;
            self.sift_down(0);
        }
        let top = *self.heap.first()?;
        self.hole = true;
        Some(top)
    }

    fn sift_up(&mut self, mut i: usize) {
        let h = &mut self.heap;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !h[i].before(&h[parent]) {
                break;
            }
            h.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let h = &mut self.heap;
        loop {
            let left = 2 * i + 1;
            if left >= h.len() {
                break;
            }
            let right = left + 1;
            let child = if right < h.len() && h[right].before(&h[left]) {
                right
            } else {
                left
            };
            if !h[child].before(&h[i]) {
                break;
            }
            h.swap(i, child);
            i = child;
        }
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

    proptest::proptest! {
        /// Against a sorted list: any mix of pushes and pops gives the
        /// earliest (time, push order) first, and `next_at` names it.
        #[test]
        fn pops_in_time_then_push_order(ops in proptest::collection::vec(proptest::option::of(0u64..50), 1..200)) {
            let mut q = Events::default();
            let mut model: Vec<(u64, u32)> = Vec::new();
            for (tid, op) in ops.into_iter().enumerate() {
                let tid = tid as u32;
                match op {
                    Some(at) => {
                        q.push(at, tid, 0);
                        model.push((at, tid));
                        model.sort();
                    }
                    None => {
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        proptest::prop_assert_eq!(q.pop().map(|e| (e.at, e.tid)), want);
                    }
                }
                proptest::prop_assert_eq!(q.next_at(), model.first().map(|m| m.0));
            }
        }
    }
}
