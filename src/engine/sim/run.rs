//! The event loop: simulated threads as stackful coroutines on one OS
//! thread, resumed in virtual-time order.
//!
//! Each thread's body runs in a corosensei coroutine on a small stack of its
//! own; whenever it must wait (its turn in time order, work, a spin, a park)
//! it suspends, and the loop resumes whichever thread's event is earliest.
//! Each resumption runs with that thread's lock statistics installed
//! ([`crate::locks::stats::installed`]), so counters land per simulated
//! thread. Timers fire between events: the monitor's windows, the soft stop
//! (the run's duration: the body sees its stop flag and finishes its current
//! operation) and the hard stop (twice the duration: the watchdog; whatever
//! still runs is cut off and unwound).

use super::kernel::{Counters, Kernel, State};
use super::platform;
use super::trace::SchedTrace;
use crate::locks::stats::ThreadStats;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// A simulated thread's stack: 256 KiB of address space, touched lazily
/// (the world's operations and the locks' slow paths need a few KiB;
/// unoptimised test builds more), so thousands of threads fit.
const STACK_BYTES: usize = 256 * 1024;

/// A thread's body.
pub type Body<'a> = Box<dyn FnOnce() + 'a>;

/// When the loop calls back, in virtual picoseconds.
pub struct Timers<'a> {
    /// The monitor's window (0: no windows).
    pub window_ps: u64,
    /// Called at the end of each window with its end time and the CPUs' busy
    /// time up to it.
    pub on_window: Box<dyn FnMut(u64, u64) + 'a>,
    /// The run's duration: `on_stop` is called once when it is reached.
    pub stop_ps: u64,
    pub on_stop: Box<dyn FnMut() + 'a>,
    /// The watchdog: nothing runs past this.
    pub cut_off_ps: u64,
}

/// How a run ended.
#[derive(Debug)]
pub struct Ended {
    /// Virtual time of the last event run, picoseconds.
    pub at_ps: u64,
    /// The watchdog stopped the run.
    pub cut_off: bool,
    /// Threads whose bodies had not returned at the end: cut off by the
    /// watchdog, or (when no event was left) waiting for a wake-up that
    /// nothing will send.
    pub unfinished: usize,
    /// Events run (stale ones not counted).
    pub events: u64,
    pub wall: Duration,
    pub counters: Counters,
    /// Per thread: (voluntary, involuntary) context switches and CPU time.
    pub threads: Vec<ThreadEnd>,
    /// Lines the run touched.
    pub lines: usize,
    /// Its context switches, if the kernel recorded them.
    pub trace: Option<SchedTrace>,
}

/// One thread's machine-level figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadEnd {
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// Virtual CPU time it ran, ns.
    pub cpu_ns: u64,
}

/// Run `bodies` as threads of `kernel` (which must have been made for that
/// many threads) until they all return or the watchdog cuts them off.
/// `stats[i]` receives thread i's lock statistics.
pub fn run(
    kernel: Kernel,
    bodies: Vec<Body<'_>>,
    stats: &mut [ThreadStats],
    mut timers: Timers<'_>,
) -> Ended {
    assert_eq!(kernel.threads().len(), bodies.len());
    assert_eq!(stats.len(), bodies.len());
    let wall = Instant::now();
    let kernel = RefCell::new(kernel);
    let mut coroutines: Vec<Option<Coroutine<(), (), (), DefaultStack>>> =
        bodies.into_iter().map(|b| Some(coroutine(b))).collect();
    let (mut events, mut last, mut stopped, mut cut_off) = (0u64, 0u64, false, false);
    let mut next_window = timers.window_ps;
    platform::installed(&kernel, || {
        loop {
            let Some(ev) = kernel.borrow_mut().events.pop() else {
                break;
            };
            let live = {
                let k = kernel.borrow();
                let t = &k.threads()[ev.tid as usize];
                ev.wake || (t.generation == ev.generation && t.state == State::Running)
            };
            if !live {
                continue;
            }
            while timers.window_ps > 0 && next_window <= ev.at {
                let busy = kernel.borrow().busy_at(next_window);
                (timers.on_window)(next_window, busy);
                next_window += timers.window_ps;
            }
            if !stopped && ev.at >= timers.stop_ps {
                stopped = true;
                (timers.on_stop)();
            }
            if ev.at >= timers.cut_off_ps {
                cut_off = true;
                break;
            }
            if ev.wake {
                kernel.borrow_mut().timer_wake(ev.tid, ev.generation, ev.at);
                continue;
            }
            kernel.borrow_mut().resume(ev.tid, ev.at);
            last = ev.at;
            events += 1;
            let co = coroutines[ev.tid as usize]
                .as_mut()
                .expect("only live threads have events");
            let result =
                crate::locks::stats::installed(&mut stats[ev.tid as usize], || co.resume(()));
            if let CoroutineResult::Return(()) = result {
                coroutines[ev.tid as usize] = None;
                kernel.borrow_mut().exit();
            }
        }
        kernel.borrow_mut().teardown = true;
        // Unwind what is still suspended, each with its own statistics.
        for (tid, co) in coroutines.iter_mut().enumerate() {
            if let Some(co) = co.take() {
                crate::locks::stats::installed(&mut stats[tid], || drop(co));
            }
        }
    });
    let mut k = kernel.into_inner();
    let trace = k.trace.take();
    let threads = k.threads();
    Ended {
        at_ps: last,
        cut_off,
        unfinished: threads.iter().filter(|t| t.state != State::Done).count(),
        events,
        wall: wall.elapsed(),
        counters: k.counters,
        threads: threads
            .iter()
            .map(|t| ThreadEnd {
                nvcsw: t.nvcsw,
                nivcsw: t.nivcsw,
                cpu_ns: t.cpu_ps / 1_000,
            })
            .collect(),
        lines: k.lines_touched(),
        trace,
    }
}

fn coroutine(body: Body<'_>) -> Coroutine<(), (), (), DefaultStack> {
    let stack = DefaultStack::new(STACK_BYTES).expect("mapping a simulated thread's stack");
    // SAFETY: everything `body` borrows outlives `run`, which owns the
    // coroutine and drops it (driven to completion, or unwound) before it
    // returns; coroutines are never forgotten.
    unsafe {
        Coroutine::with_stack_unchecked(stack, move |yielder: &Yielder<(), ()>, ()| {
            platform::enter_coroutine(yielder);
            body();
        })
    }
}

/// This process's peak resident memory so far (VmHWM of /proc/self/status),
/// MiB; 0 where the kernel does not say.
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}
