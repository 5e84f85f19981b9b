//! Lock contention as the kernel's `lock:contention_begin` and
//! `lock:contention_end` tracepoints print it (include/trace/events/lock.h,
//! since v5.19), recorded by either engine, so that a simulated run's slow
//! paths can be set beside a native run's one by one.
//!
//! Why: a cross-check row that is off says only that the throughput
//! differs. On synchro at 2 CPUs with the mutex, the two runs' slow paths
//! differ twenty-fold in number (docs/sim.md, "Where the mutex row differs"),
//! which only a per-acquisition record shows.
//!
//! Off unless a run asks for it ([`start`]). Then every slow path of every
//! kind records, in its execution context's own buffer (see
//! [`super::stats`]), its start (where it counts a contended request) and its
//! grant (where it notes its wait), each with the time and CPU of that
//! context's [`Clock`]:
//! - natively CLOCK_MONOTONIC and sched_getcpu(), so the file merges by
//!   timestamp with `perf record -k CLOCK_MONOTONIC -e sched:sched_switch`;
//!   each stamp is a vDSO clock read and a getcpu (23 ns a pair in a C
//!   loop on the test machine), two a contended acquisition, and the
//!   grant's falls inside the critical section;
//! - simulated, the virtual time and CPU, read without charging the thread:
//!   a traced simulated run is the run untraced.
//!
//! Lines are the tracepoints' TP_printk with the lock's class where the
//! kernel prints its address (`contention_begin: mmap_lock (flags=WRITE)`,
//! `contention_end: mmap_lock (ret=0)`); the flags name the request's mode
//! only. Times are seconds to the nanosecond.

use super::stats::LockClass;
use crate::mode::Mode;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// On its own line: every slow path reads it, and no neighbour's write
/// should turn that read into a miss (not seen to matter on the test
/// machine; 128 bytes).
static ON: CachePadded<AtomicBool> = CachePadded::new(AtomicBool::new(false));

/// The threads' events handed over while on, per thread index.
static COLLECTED: Mutex<Vec<Traced>> = Mutex::new(Vec::new());

/// Where an execution context's events are stamped: (ns, CPU).
pub type Clock = fn() -> (u64, u32);

thread_local! {
    static CLOCK: Cell<Clock> = const { Cell::new(native_clock) };
}

/// Whether slow paths record their events now: one relaxed load, on slow
/// paths only.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Record from now on, into an empty collection.
pub fn start() {
    COLLECTED.lock().expect("no panic holds it").clear();
    ON.store(true, Ordering::Relaxed);
}

/// Stop recording and take what the threads handed over ([`collect`]).
pub fn finish() -> LockTrace {
    ON.store(false, Ordering::Relaxed);
    let mut threads = std::mem::take(&mut *COLLECTED.lock().expect("no panic holds it"));
    threads.sort_by_key(|t| t.index);
    LockTrace { threads }
}

/// Thread `index` (named `name`, as its engine names it) hands over
/// `events`, oldest first; a thread may hand over several batches.
pub fn collect(index: u32, name: &str, events: Vec<Contention>) {
    if events.is_empty() {
        return;
    }
    let mut all = COLLECTED.lock().expect("no panic holds it");
    match all.iter_mut().find(|t| t.index == index) {
        Some(t) => t.events.extend(events),
        None => all.push(Traced {
            index,
            name: name.to_string(),
            events,
        }),
    }
}

/// Run `f` with `clock` stamping this OS thread's events (a simulator
/// stamps virtual time), restoring the previous clock afterwards.
pub fn with_clock<R>(clock: Clock, f: impl FnOnce() -> R) -> R {
    struct Restore(Clock);
    impl Drop for Restore {
        fn drop(&mut self) {
            CLOCK.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CLOCK.with(|c| c.replace(clock)));
    f()
}

/// CLOCK_MONOTONIC and the CPU the calling thread is on.
fn native_clock() -> (u64, u32) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; sched_getcpu
    // takes nothing. Both only fail on arguments that are constants here.
    let (cpu, _) = unsafe {
        (
            libc::sched_getcpu(),
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts),
        )
    };
    let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    (ns, cpu.max(0) as u32)
}

/// A slow path's start or grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// contention_begin: a request of this mode left the fast path.
    Begin(Mode),
    /// contention_end: it was granted.
    End,
}

/// One event, stamped by the context's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contention {
    pub at_ns: u64,
    pub cpu: u32,
    pub class: LockClass,
    pub what: What,
}

impl Contention {
    /// `what` of `class`, now.
    pub fn now(class: LockClass, what: What) -> Contention {
        let (at_ns, cpu) = CLOCK.with(Cell::get)();
        Contention {
            at_ns,
            cpu,
            class,
            what,
        }
    }
}

/// One thread's events.
#[derive(Clone, Debug, PartialEq)]
pub struct Traced {
    /// The engine's index of the thread (the sched trace's pid less 1).
    pub index: u32,
    pub name: String,
    pub events: Vec<Contention>,
}

/// A run's lock events, per thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockTrace {
    pub threads: Vec<Traced>,
}

impl LockTrace {
    /// The events as ftrace's text in time order (ties: by thread, then as
    /// recorded), under a header whose second line is `about` (what ran,
    /// and the clock); thread i is `NAME-(i + 1)` as in the sched trace.
    pub fn to_ftrace(&self, about: &str) -> String {
        let mut lines: Vec<(u64, u32, usize, &Traced, &Contention)> = self
            .threads
            .iter()
            .flat_map(|t| {
                t.events
                    .iter()
                    .enumerate()
                    .map(move |(seq, e)| (e.at_ns, t.index, seq, t, e))
            })
            .collect();
        lines.sort_by_key(|&(at, index, seq, ..)| (at, index, seq));
        let mut out = String::with_capacity(lines.len() * 100 + 256);
        header(&mut out, about);
        for (at, _, _, t, e) in lines {
            let task = format!("{}-{}", t.name, t.index + 1);
            let stamp = format!("{:>5}.{:09}", at / 1_000_000_000, at % 1_000_000_000);
            let class = e.class.key();
            let _ = match e.what {
                What::Begin(mode) => writeln!(
                    out,
                    "{task:>16} [{:03}] ..... {stamp}: contention_begin: {class} (flags={})",
                    e.cpu,
                    flag(mode)
                ),
                What::End => writeln!(
                    out,
                    "{task:>16} [{:03}] ..... {stamp}: contention_end: {class} (ret=0)",
                    e.cpu
                ),
            };
        }
        out
    }
}

/// The head of ftrace's text output (`/sys/kernel/tracing/trace` with no
/// tracer), with `about` as a comment line of its own.
pub fn header(out: &mut String, about: &str) {
    let _ = writeln!(out, "# tracer: nop\n# {about}");
    let _ = writeln!(out, "#           TASK-PID     CPU#  TIMESTAMP  FUNCTION");
}

/// The tracepoint's flag for a request's mode (LCB_F_READ, LCB_F_WRITE).
fn flag(mode: Mode) -> &'static str {
    match mode {
        Mode::Read => "READ",
        Mode::Write => "WRITE",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64, cpu: u32, what: What) -> Contention {
        Contention {
            at_ns: ns,
            cpu,
            class: LockClass::MmapLock,
            what,
        }
    }

    #[test]
    fn lines_come_in_time_order_across_threads_with_the_tracepoints_text() {
        let trace = LockTrace {
            threads: vec![
                Traced {
                    index: 0,
                    name: "monitor-0".into(),
                    events: vec![
                        at(1_500, 0, What::Begin(Mode::Read)),
                        at(4_000, 0, What::End),
                    ],
                },
                Traced {
                    index: 2,
                    name: "mprotect-0".into(),
                    events: vec![
                        at(2_000_000_123, 1, What::Begin(Mode::Write)),
                        at(2_000_000_124, 1, What::End),
                    ],
                },
                Traced {
                    index: 1,
                    name: "monitor-1".into(),
                    events: vec![at(1_500, 1, What::Begin(Mode::Write))],
                },
            ],
        };
        let text = trace.to_ftrace("what ran");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "# what ran");
        assert_eq!(
            &lines[3..],
            [
                "     monitor-0-1 [000] .....     0.000001500: contention_begin: mmap_lock (flags=READ)",
                "     monitor-1-2 [001] .....     0.000001500: contention_begin: mmap_lock (flags=WRITE)",
                "     monitor-0-1 [000] .....     0.000004000: contention_end: mmap_lock (ret=0)",
                "    mprotect-0-3 [001] .....     2.000000123: contention_begin: mmap_lock (flags=WRITE)",
                "    mprotect-0-3 [001] .....     2.000000124: contention_end: mmap_lock (ret=0)",
            ]
        );
    }

    #[test]
    fn a_context_stamps_with_its_own_clock_and_gets_the_old_one_back() {
        fn fixed() -> (u64, u32) {
            (42, 7)
        }
        let e = with_clock(fixed, || Contention::now(LockClass::IMmap, What::End));
        assert_eq!((e.at_ns, e.cpu), (42, 7));
        let native = Contention::now(LockClass::IMmap, What::End);
        assert_ne!((native.at_ns, native.cpu), (42, 7), "restored");
    }
}
