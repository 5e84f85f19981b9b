//! The start line: threads wait until every one of them is ready, then start
//! together (will-it-scale's and locktorture's barrier), so thread creation is
//! not part of the measured run.
//!
//! Unlike std's Barrier, the gate can also be opened before everyone arrived,
//! which the engine needs when creating a thread fails halfway: the threads
//! already waiting must be released (to see the stop flag) rather than wait
//! forever for one that will never come.

use std::sync::{Condvar, Mutex};

#[derive(Default)]
pub struct Gate {
    state: Mutex<State>,
    /// The starter waits here for arrivals: one waiter, so each arrival wakes
    /// only it (waking every worker per arrival would be n^2 wake-ups).
    arrivals: Condvar,
    /// Workers wait here for the gate to open: one wake-up for all of them.
    opened: Condvar,
}

#[derive(Default)]
struct State {
    arrived: usize,
    open: bool,
}

impl Gate {
    /// A worker is ready: count it and wait for the gate to open.
    pub fn arrive_and_wait(&self) {
        let mut s = self.state.lock().expect("gate lock poisoned");
        s.arrived += 1;
        self.arrivals.notify_one();
        while !s.open {
            s = self.opened.wait(s).expect("gate lock poisoned");
        }
    }

    /// Block until `n` workers have arrived (one thread may wait here).
    pub fn wait_for(&self, n: usize) {
        let mut s = self.state.lock().expect("gate lock poisoned");
        while s.arrived < n {
            s = self.arrivals.wait(s).expect("gate lock poisoned");
        }
    }

    /// Let every waiting (and every later) worker through.
    pub fn open(&self) {
        self.state.lock().expect("gate lock poisoned").open = true;
        self.opened.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn nobody_passes_before_open_and_everyone_after() {
        let gate = Gate::default();
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    gate.arrive_and_wait();
                    passed.fetch_add(1, Ordering::SeqCst);
                });
            }
            gate.wait_for(3);
            assert_eq!(passed.load(Ordering::SeqCst), 0);
            gate.open();
        });
        assert_eq!(passed.load(Ordering::SeqCst), 3);
    }
}
