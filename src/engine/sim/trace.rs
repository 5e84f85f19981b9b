//! The simulator's context switches and wake-ups as the kernel's
//! `sched:sched_switch` and `sched:sched_wakeup` tracepoints print them, so
//! a simulated schedule can be read with the same scripts as a native one
//! (`/sys/kernel/tracing/trace` with those two events enabled, or
//! `trace-cmd report`).
//!
//! Why: a crosscheck row that is off says only that the throughput differs.
//! Setting the two schedules side by side says where: on synchro at 2 CPUs
//! with the mutex, both show one CPU running a single thread for a whole
//! slice while the other CPU's threads hand it back and forth by
//! sched_yield every microsecond, which only a per-switch record shows.
//!
//! One line per event, in the text format of the tracepoints (TP_printk of
//! include/trace/events/sched.h). A wake-up is printed on the waker's CPU
//! when it is issued, by the waking thread (`<idle>-0` for a timer), with
//! the wakee's CPU as `target_cpu`; the switch to the wakee follows a
//! wake-up latency later. In a switch, `prev_state` is `R` for a thread that
//! stays runnable (preempted or yielded), `S` for one that blocked, `X` for
//! one that exited; the idle task is `swapper/N`, pid 0. Times are virtual
//! seconds to the microsecond, as ftrace prints them. Simulated thread i
//! has pid 1 + i and the native engine's thread name (`monitor-0`).

use crate::locks::trace::header;
use std::borrow::Cow;
use std::fmt::Write as _;

/// Why a thread left its CPU, as `prev_state` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: preempted, or yielded (TASK_RUNNING).
    Runnable,
    /// Blocked (TASK_INTERRUPTIBLE).
    Blocked,
    /// Exited (EXIT_DEAD).
    Dead,
}

impl PrevState {
    fn letter(self) -> char {
        match self {
            PrevState::Runnable => 'R',
            PrevState::Blocked => 'S',
            PrevState::Dead => 'X',
        }
    }
}

/// One switch on one CPU: `prev` (None: the idle task) left, `next` came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    pub at_ps: u64,
    pub cpu: u32,
    pub prev: Option<u32>,
    pub state: PrevState,
    pub next: Option<u32>,
}

/// One wake-up: `waker` (None: a timer) on `cpu` made `wakee` runnable on
/// `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wakeup {
    pub at_ps: u64,
    pub cpu: u32,
    pub waker: Option<u32>,
    pub wakee: u32,
    pub target: u32,
}

/// A run's switches and wake-ups, in the order they were recorded: the
/// switch that ends an idle CPU's wait is recorded when the wake-up is sent
/// and happens a latency later, so [`SchedTrace::to_ftrace`] puts them in
/// time order.
#[derive(Debug, Default)]
pub struct SchedTrace {
    pub switches: Vec<Switch>,
    pub wakeups: Vec<Wakeup>,
}

impl SchedTrace {
    /// The switch at `at_ps` on `cpu` to `from` goes to `to` instead (a CPU
    /// coming out of idle picked another wakee before it got there).
    pub fn rename_next(&mut self, at_ps: u64, cpu: usize, from: u32, to: u32) {
        let cpu = cpu as u32;
        if let Some(s) = self
            .switches
            .iter_mut()
            .rev()
            .find(|s| s.at_ps == at_ps && s.cpu == cpu && s.next == Some(from))
        {
            s.next = Some(to);
        }
    }

    pub fn push(&mut self, s: Switch) {
        self.switches.push(s);
    }

    pub fn push_wakeup(&mut self, w: Wakeup) {
        self.wakeups.push(w);
    }

    /// The trace as ftrace's text in time order (ties: wake-ups first, then
    /// in the order recorded), thread i named `names[i]`.
    pub fn to_ftrace(&self, names: &[String], cpus: usize) -> String {
        let events = self.switches.len() + self.wakeups.len();
        let mut out = String::with_capacity(events * 160 + 256);
        let about = format!(
            "rmap-storm simulator: {} switches and {} wake-ups on {cpus} virtual CPUs; times in virtual seconds",
            self.switches.len(),
            self.wakeups.len()
        );
        header(&mut out, &about);
        let task = |t: Option<u32>, idle: &str| match t {
            Some(t) => (Cow::Borrowed(names[t as usize].as_str()), t + 1),
            None => (Cow::Owned(idle.to_string()), 0),
        };
        let stamp = |at_ps: u64| {
            let us = at_ps / 1_000_000;
            format!("{:>5}.{:06}", us / 1_000_000, us % 1_000_000)
        };
        // Ties: a wake-up before the switch it may cause, as ftrace has them.
        let mut order: Vec<Line> = self
            .wakeups
            .iter()
            .map(Line::Wakeup)
            .chain(self.switches.iter().map(Line::Switch))
            .collect();
        order.sort_by_key(|l| match l {
            Line::Wakeup(w) => (w.at_ps, 0),
            Line::Switch(s) => (s.at_ps, 1),
        });
        for line in order {
            match line {
                Line::Wakeup(w) => {
                    let (waker, waker_pid) = task(w.waker, "<idle>");
                    let wakee = &names[w.wakee as usize];
                    let _ = writeln!(
                        out,
                        "{:>16} [{:03}] dN.3. {}: sched_wakeup: comm={wakee} pid={} prio=120 target_cpu={:03}",
                        format!("{waker}-{waker_pid}"),
                        w.cpu,
                        stamp(w.at_ps),
                        w.wakee + 1,
                        w.target,
                    );
                }
                Line::Switch(s) => {
                    let idle = format!("swapper/{}", s.cpu);
                    let (prev, prev_pid) = task(s.prev, &idle);
                    let (next, next_pid) = task(s.next, &idle);
                    let _ = writeln!(
                        out,
                        "{:>16} [{:03}] d..2. {}: sched_switch: prev_comm={prev} prev_pid={prev_pid} \
                         prev_prio=120 prev_state={} ==> next_comm={next} next_pid={next_pid} next_prio=120",
                        format!("{prev}-{prev_pid}"),
                        s.cpu,
                        stamp(s.at_ps),
                        s.state.letter(),
                    );
                }
            }
        }
        out
    }
}

/// One line of the printed trace.
enum Line<'a> {
    Wakeup(&'a Wakeup),
    Switch(&'a Switch),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_prints_as_the_sched_switch_tracepoint() {
        let mut t = SchedTrace::default();
        t.push(Switch {
            at_ps: 1_500_002_000_000,
            cpu: 1,
            prev: Some(0),
            state: PrevState::Runnable,
            next: Some(1),
        });
        t.push(Switch {
            at_ps: 2_000_000_000_000,
            cpu: 0,
            prev: Some(1),
            state: PrevState::Blocked,
            next: None,
        });
        let names = ["monitor-0".to_string(), "munmap-0".to_string()];
        let text = t.to_ftrace(&names, 2);
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines[0],
            "     monitor-0-1 [001] d..2.     1.500002: sched_switch: prev_comm=monitor-0 prev_pid=1 \
             prev_prio=120 prev_state=R ==> next_comm=munmap-0 next_pid=2 next_prio=120"
        );
        assert!(lines[1].ends_with(
            "prev_comm=munmap-0 prev_pid=2 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"
        ));
        assert!(lines[1].contains("[000] d..2.     2.000000:"));
    }

    #[test]
    fn a_wakeup_prints_as_the_sched_wakeup_tracepoint_before_a_switch_at_its_time() {
        let mut t = SchedTrace::default();
        t.push(Switch {
            at_ps: 3_000_000,
            cpu: 0,
            prev: None,
            state: PrevState::Runnable,
            next: Some(1),
        });
        t.push_wakeup(Wakeup {
            at_ps: 3_000_000,
            cpu: 0,
            waker: None,
            wakee: 1,
            target: 0,
        });
        t.push_wakeup(Wakeup {
            at_ps: 1_000_000,
            cpu: 1,
            waker: Some(0),
            wakee: 1,
            target: 0,
        });
        let names = ["monitor-0".to_string(), "munmap-0".to_string()];
        let text = t.to_ftrace(&names, 2);
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines[0],
            "     monitor-0-1 [001] dN.3.     0.000001: sched_wakeup: comm=munmap-0 pid=2 prio=120 target_cpu=000"
        );
        assert_eq!(
            lines[1],
            "        <idle>-0 [000] dN.3.     0.000003: sched_wakeup: comm=munmap-0 pid=2 prio=120 target_cpu=000"
        );
        assert!(lines[2].contains("sched_switch: prev_comm=swapper/0 prev_pid=0"));
    }
}
