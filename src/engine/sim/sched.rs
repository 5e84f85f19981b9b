//! The scheduler's model: per-CPU run queues, time slices, wake-up
//! placement and preemption, after CFS (kernel/sched/fair.c before 6.6) or
//! EEVDF (6.6 on, [`super::eevdf`]) as the profile's `sched.policy` says,
//! and the kernel's preemption models.
//!
//! - Each CPU runs one thread; runnable threads wait in its run queue,
//!   ordered by virtual runtime (CPU time received), the least served first.
//! - CFS: a thread's slice is `sched_latency / nr_running`, at least
//!   `min_granularity`, and it expires at the next scheduler tick after that
//!   (the tick is where CFS checks it: check_preempt_tick). EEVDF: it runs
//!   to its virtual deadline, checked at the tick too (HRTICK is off by
//!   default).
//! - A woken thread goes to its previous CPU if idle, else to an idle CPU of
//!   the same die, else any idle CPU, else back to its previous CPU's queue
//!   (select_task_rq_fair in spirit); a pinned one (affinity to one CPU, as
//!   `--pin` sets natively) to its CPU, idle or not. CFS places a sleeper's
//!   virtual runtime at most half a latency period behind the queue's
//!   minimum (place_entity's sleeper credit), and it preempts the running
//!   thread when it is more than `wakeup_granularity` behind it
//!   (check_preempt_wakeup). EEVDF's placement and preemption are in
//!   [`super::eevdf`].
//! - A CPU that goes idle pulls, from the busiest queue, the waiting thread
//!   that queue would run last, among those not pinned (newidle balance).
//! - Each switch and wake-up latency is drawn about its mean when the
//!   profile gives a spread (`sched.jitter_ns`, [`SchedPs::draw`]): on a
//!   real machine no two take the same time, and a simulation whose every
//!   latency is the same locks its threads into one phase (docs/sim.md,
//!   "Jitter").
//!
//! When a thread that should be preempted actually is depends on the
//! preemption model ([`Preempt`], the kernel's PREEMPT_DYNAMIC names): see
//! [`Point`].

use crate::model::machine::SchedPolicy;
use clap::ValueEnum;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The kernel's preemption model (CONFIG_PREEMPT_NONE / _VOLUNTARY / PREEMPT,
/// `preempt=` with PREEMPT_DYNAMIC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preempt {
    /// Switch only when a task blocks, at an explicit cond_resched() (per
    /// vma in rmap_walk), or at a return to user space once its slice is
    /// over or a wakee should run.
    None,
    /// Also at every might_sleep() (the entry of a sleeping lock, a
    /// GFP_KERNEL allocation): CONFIG_PREEMPT_VOLUNTARY's might_resched().
    #[default]
    Voluntary,
    /// Anywhere outside a preempt-disabled (spinning or spinlock-holding)
    /// section.
    Full,
    /// Not a kernel's: user-space threads, as the native engine runs them.
    /// Anywhere, spinning or holding a spinlock included, since user space
    /// cannot disable preemption. For checking the simulator against this
    /// machine (`crosscheck`), where a preempted ticket-lock holder or next
    /// waiter stalls every spinner until its CPU's slice ends.
    User,
}

impl Preempt {
    pub fn name(self) -> &'static str {
        match self {
            Preempt::None => "none",
            Preempt::Voluntary => "voluntary",
            Preempt::Full => "full",
            Preempt::User => "user",
        }
    }

    /// Whether kernel work (not a return to user) may be preempted with
    /// `preempt_count` preempt_disable()s outstanding.
    pub fn preempts_kernel(self, preempt_count: u32) -> bool {
        match self {
            Preempt::None | Preempt::Voluntary => false,
            Preempt::Full => preempt_count == 0,
            Preempt::User => true,
        }
    }
}

/// Where a running thread checks whether it should give its CPU away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// Back to user space after an operation (exit_to_user_mode): every model.
    UserReturn,
    /// An explicit cond_resched(): every model (PREEMPT_NONE kernels rely
    /// on them; under full, preemption anywhere subsumes them).
    CondResched,
    /// might_sleep(): voluntary and full.
    MightSleep,
    /// Any instruction of kernel code (an interrupt return, preempt_enable):
    /// full only.
    Anywhere,
}

impl Point {
    /// Whether `model` switches here (when a switch is due and preemption is
    /// enabled).
    pub fn switches_under(self, model: Preempt) -> bool {
        match self {
            Point::UserReturn | Point::CondResched => true,
            Point::MightSleep => model != Preempt::None,
            Point::Anywhere => matches!(model, Preempt::Full | Preempt::User),
        }
    }
}

/// Scheduler costs and periods, picoseconds.
#[derive(Clone, Copy, Debug)]
pub struct SchedPs {
    pub ctx_switch: u64,
    pub wakeup: u64,
    pub wakeup_idle: u64,
    pub wakeup_ipi: u64,
    /// From a remote wake-up to the interruption of the task it preempts.
    pub resched_ipi: u64,
    /// A sched_yield() call, switch or not (the profile's `sched.yield_ns`).
    pub sched_yield: u64,
    /// A thread's first park or unpark since a switch-in other than from
    /// its own yield (the profile's `sched.park_cold_ns`).
    pub park_cold: u64,
    /// The scale of the exponential tail of each latency (0: constant).
    pub jitter: u64,
    pub tick: u64,
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    pub policy: SchedPolicy,
    /// EEVDF's request (sysctl_sched_base_slice).
    pub base_slice: u64,
}

impl SchedPs {
    /// CFS: the slice of each of `nr_running` threads sharing a CPU.
    pub fn slice(&self, nr_running: usize) -> u64 {
        (self.latency / nr_running.max(1) as u64).max(self.min_granularity)
    }

    /// One latency of mean `mean`: `mean` itself without jitter (and no
    /// random number used, so a profile without jitter replays exactly);
    /// else a shifted exponential, `mean - b + Exp(b)` with `b` the jitter
    /// (at most `mean`): a floor no switch beats and a tail to the right,
    /// the shape measured latencies have, with the same mean and standard
    /// deviation `b`.
    pub fn draw(&self, mean: u64, rng: &mut impl Rng) -> u64 {
        let b = self.jitter.min(mean);
        if b == 0 {
            return mean;
        }
        let u: f64 = rng.random();
        let tail = -(1.0 - u).ln() * b as f64;
        mean - b + tail.round() as u64
    }

    /// The first tick at or after `t` (ticks at multiples of the period).
    pub fn tick_at_or_after(&self, t: u64) -> u64 {
        t.div_ceil(self.tick) * self.tick
    }

    /// Where a thread waking with virtual runtime `vruntime` goes in a queue
    /// whose minimum is `min_vruntime`: at most half a latency period behind
    /// it (place_entity's sleeper credit).
    pub fn place(&self, vruntime: u64, min_vruntime: u64) -> u64 {
        vruntime.max(min_vruntime.saturating_sub(self.latency / 2))
    }

    /// Whether a wakee with `woken` virtual runtime preempts the current
    /// thread at `current` (check_preempt_wakeup / wakeup_preempt_entity).
    pub fn wakeup_preempts(&self, current: u64, woken: u64) -> bool {
        current > woken.saturating_add(self.wakeup_granularity)
    }
}

/// A wake-up preemption's request (resched_curr): TIF_NEED_RESCHED is set
/// on the running thread at once, from whichever CPU woke; kernel code
/// polling it (need_resched(), preempt_enable(), the exit of a syscall)
/// sees it then, user-space code only when an interrupt takes it into the
/// kernel: the reschedule IPI, for a wake-up from another CPU. Picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resched {
    set: u64,
    interrupt: u64,
}

impl Resched {
    /// When code that polls the flag (`polls`) or user-space code sees it.
    fn seen(self, polls: bool) -> u64 {
        if polls { self.set } else { self.interrupt }
    }
}

/// One CPU.
#[derive(Debug)]
pub struct Cpu {
    /// The thread running here.
    pub current: Option<u32>,
    /// Runnable threads waiting here: (virtual runtime, sequence, thread,
    /// virtual deadline); the sequence makes each entry unique, so the
    /// deadline (EEVDF's) never decides the order.
    queue: BTreeSet<(u64, u64, u32, u64)>,
    /// The sum of the waiting threads' virtual runtimes (for EEVDF's
    /// average, [`Cpu::avg_vruntime`]).
    queued_vruntime: u128,
    /// EEVDF: the virtual time the current thread runs from `exec_start`
    /// until its deadline.
    pub request: u64,
    /// A wakee should run (set by wake-up preemption, cleared at dispatch).
    pub resched: Option<Resched>,
    /// When `current` was dispatched.
    pub exec_start: u64,
    /// `current` was woken onto this CPU while it was idle, and until
    /// `exec_start` the CPU is still coming out of idle: later wake-ups join
    /// its wake list ([`Cpu::arriving`]).
    pub waking: bool,
    /// Time with a current thread before `exec_start`, picoseconds.
    pub busy: u64,
    /// The queue's monotonic minimum virtual runtime (cfs_rq->min_vruntime).
    pub min_vruntime: u64,
    /// When this CPU's next interruption is due (0: none drawn yet; see
    /// [`super::noise`]).
    pub next_noise: u64,
}

impl Cpu {
    pub fn new() -> Cpu {
        Cpu {
            current: None,
            queue: BTreeSet::new(),
            queued_vruntime: 0,
            request: 0,
            resched: None,
            exec_start: 0,
            waking: false,
            busy: 0,
            min_vruntime: 0,
            next_noise: 0,
        }
    }

    /// Whether at `at` this CPU is still coming out of idle for the thread it
    /// was woken for, which has not run yet.
    pub fn arriving(&self, at: u64) -> bool {
        self.waking && self.current.is_some() && at < self.exec_start
    }

    /// Threads runnable here, the running one included.
    pub fn nr_running(&self) -> usize {
        self.queue.len() + usize::from(self.current.is_some())
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn enqueue(&mut self, vruntime: u64, seq: u64, tid: u32, deadline: u64) {
        self.queue.insert((vruntime, seq, tid, deadline));
        self.queued_vruntime += u128::from(vruntime);
    }

    fn remove(&mut self, entry: (u64, u64, u32, u64)) -> (u64, u32) {
        self.queue.remove(&entry);
        self.queued_vruntime -= u128::from(entry.0);
        (entry.0, entry.2)
    }

    /// The next thread to run: CFS's least served, or EEVDF's pick given
    /// the queue's average virtual runtime `avg` ([`Cpu::best_eligible`]; the
    /// least served when none is eligible, as pick_eevdf falls back to the
    /// leftmost).
    pub fn pick(&mut self, policy: SchedPolicy, avg: u64) -> Option<(u64, u32)> {
        let entry = match policy {
            SchedPolicy::Cfs => None,
            SchedPolicy::Eevdf => self.best_eligible(avg),
        }
        .or_else(|| self.queue.first().copied())?;
        Some(self.remove(entry))
    }

    /// EEVDF: the waiting thread with the earliest virtual deadline among the
    /// eligible ones, those whose virtual runtime is at most `avg` (a prefix
    /// of the queue); the earlier queued among equal deadlines.
    pub fn best_eligible(&self, avg: u64) -> Option<(u64, u64, u32, u64)> {
        self.queue
            .iter()
            .take_while(|&&(v, ..)| v <= avg)
            .min_by_key(|&&(_, _, _, d)| d)
            .copied()
    }

    /// Take `tid`'s entry out of the queue, if it has one.
    pub fn take(&mut self, tid: u32) -> Option<(u64, u32)> {
        let entry = *self.queue.iter().find(|&&(_, _, t, _)| t == tid)?;
        Some(self.remove(entry))
    }

    /// The waiting thread this CPU would run last among those `movable`
    /// (for a pulling CPU).
    pub fn steal(&mut self, movable: impl Fn(u32) -> bool) -> Option<(u64, u32)> {
        let entry = *self.queue.iter().rev().find(|&&(_, _, t, _)| movable(t))?;
        Some(self.remove(entry))
    }

    /// The lowest virtual runtime waiting here.
    pub fn min_queued_vruntime(&self) -> Option<u64> {
        self.queue.first().map(|&(v, ..)| v)
    }

    /// The highest virtual runtime waiting here (where a yielding thread goes).
    pub fn max_queued_vruntime(&self) -> Option<u64> {
        self.queue.last().map(|&(v, ..)| v)
    }

    /// EEVDF's V (avg_vruntime): the mean virtual runtime of the waiting
    /// threads and `current`, the running one's (or one about to be queued
    /// again) if given; None with neither.
    pub fn avg_vruntime(&self, current: Option<u64>) -> Option<u64> {
        let n = self.queue.len() as u128 + u128::from(current.is_some());
        let sum = self.queued_vruntime + u128::from(current.unwrap_or(0));
        (n > 0).then(|| (sum / n) as u64)
    }

    /// When the current thread's slice ends, if anyone waits for the CPU.
    pub fn slice_end(&self, sched: &SchedPs) -> Option<u64> {
        let run = match sched.policy {
            SchedPolicy::Cfs => sched.slice(self.nr_running()),
            SchedPolicy::Eevdf => self.request,
        };
        (!self.queue.is_empty()).then(|| sched.tick_at_or_after(self.exec_start + run))
    }

    /// Whether the current thread should give the CPU away at `now`, in
    /// code that reads TIF_NEED_RESCHED (`polls`: kernel code, a return to
    /// user space) or in user-space code, which meets it only by interrupt.
    pub fn resched_due(&self, sched: &SchedPs, now: u64, polls: bool) -> bool {
        self.resched.is_some_and(|r| now >= r.seen(polls))
            || self.slice_end(sched).is_some_and(|end| now >= end)
    }

    /// Ask the current thread to give the CPU away: the flag is set at
    /// `set`, the interrupt that brings it to user-space code lands at
    /// `interrupt`; an earlier request stands.
    pub fn request_resched(&mut self, set: u64, interrupt: u64) {
        let r = Resched { set, interrupt };
        self.resched = Some(self.resched.map_or(r, |old| Resched {
            set: old.set.min(set),
            interrupt: old.interrupt.min(interrupt),
        }));
    }

    /// Busy time up to `now`, picoseconds.
    pub fn busy_at(&self, now: u64) -> u64 {
        self.busy
            + self
                .current
                .map_or(0, |_| now.saturating_sub(self.exec_start))
    }
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched() -> SchedPs {
        SchedPs {
            ctx_switch: 1,
            wakeup: 1,
            wakeup_idle: 1,
            wakeup_ipi: 1,
            resched_ipi: 1,
            sched_yield: 0,
            park_cold: 0,
            jitter: 0,
            tick: 4_000,
            latency: 24_000,
            min_granularity: 3_000,
            wakeup_granularity: 4_000,
            policy: SchedPolicy::Cfs,
            base_slice: 3_000,
        }
    }

    #[test]
    fn without_jitter_a_latency_is_its_mean_and_uses_no_random_number() {
        use rand::SeedableRng;
        let s = sched();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let untouched = rng.clone();
        assert_eq!(s.draw(1_300, &mut rng), 1_300);
        assert_eq!(rng, untouched);
    }

    #[test]
    fn a_jittered_latency_keeps_its_mean_and_has_the_jitter_as_its_spread() {
        use rand::SeedableRng;
        let s = SchedPs {
            jitter: 400,
            ..sched()
        };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| s.draw(1_300, &mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean - 1_300.0).abs() < 5.0, "mean {mean}");
        assert!((sd - 400.0).abs() < 5.0, "sd {sd}");
        assert!(xs.iter().all(|&x| x >= 900.0), "below the floor");
        // The spread never exceeds the mean: no latency below 0.
        assert!((0..1_000).all(|_| s.draw(100, &mut rng) < 2_000));
    }

    #[test]
    fn slices_share_the_latency_down_to_the_minimum_granularity() {
        let s = sched();
        assert_eq!(s.slice(1), 24_000);
        assert_eq!(s.slice(4), 6_000);
        assert_eq!(s.slice(32), 3_000);
    }

    /// Polling code sees the flag when it is set, user-space code at the
    /// interrupt; a later request does not put an earlier one off.
    #[test]
    fn a_reschedule_is_seen_when_set_or_at_its_interrupt() {
        let s = sched();
        let mut cpu = Cpu::new();
        cpu.current = Some(0);
        cpu.request_resched(10, 60);
        cpu.request_resched(20, 90);
        assert!(!cpu.resched_due(&s, 9, true) && cpu.resched_due(&s, 10, true));
        assert!(!cpu.resched_due(&s, 59, false) && cpu.resched_due(&s, 60, false));
    }

    #[test]
    fn a_slice_ends_at_the_next_tick_and_only_when_someone_waits() {
        let s = sched();
        let mut cpu = Cpu::new();
        cpu.current = Some(0);
        cpu.exec_start = 1_000;
        assert_eq!(cpu.slice_end(&s), None, "alone: the slice never ends");
        assert!(!cpu.resched_due(&s, u64::MAX, true));
        cpu.enqueue(0, 0, 1, 0);
        // 2 running: a 12 us slice from 1 us ends at 13 us, checked at the 16 us tick.
        assert_eq!(cpu.slice_end(&s), Some(16_000));
        assert!(!cpu.resched_due(&s, 15_999, true) && cpu.resched_due(&s, 16_000, false));
    }

    #[test]
    fn sleepers_get_at_most_half_a_latency_of_credit_and_preempt_past_the_granularity() {
        let s = sched();
        assert_eq!(s.place(0, 100_000), 88_000);
        assert_eq!(s.place(95_000, 100_000), 95_000);
        assert!(s.wakeup_preempts(100_000, 95_999));
        assert!(!s.wakeup_preempts(100_000, 96_000));
    }

    #[test]
    fn the_queue_serves_the_least_served_first_and_gives_away_its_last_movable() {
        let mut cpu = Cpu::new();
        cpu.enqueue(50, 0, 7, 0);
        cpu.enqueue(10, 1, 8, 0);
        cpu.enqueue(10, 2, 9, 0);
        assert_eq!(cpu.max_queued_vruntime(), Some(50));
        assert_eq!(cpu.pick(SchedPolicy::Cfs, 0), Some((10, 8)));
        assert_eq!(cpu.steal(|t| t != 7), Some((10, 9)));
        assert_eq!(cpu.steal(|t| t != 7), None);
        assert_eq!(cpu.steal(|_| true), Some((50, 7)));
        assert_eq!(cpu.pick(SchedPolicy::Cfs, 0), None);
    }

    #[test]
    fn eevdf_picks_the_earliest_deadline_among_the_eligible() {
        let mut cpu = Cpu::new();
        // (vruntime, deadline): 8 is eligible but late, 9 eligible and
        // earliest, 7 earliest of all but ahead of the average.
        cpu.enqueue(10, 0, 8, 40);
        cpu.enqueue(20, 1, 9, 30);
        cpu.enqueue(60, 2, 7, 5);
        assert_eq!(cpu.avg_vruntime(None), Some(30));
        assert_eq!(cpu.avg_vruntime(Some(90)), Some(45));
        assert_eq!(cpu.pick(SchedPolicy::Eevdf, 30), Some((20, 9)));
        assert_eq!(cpu.pick(SchedPolicy::Eevdf, 30), Some((10, 8)));
        // Nobody eligible: the least served, as pick_eevdf falls back to.
        assert_eq!(cpu.pick(SchedPolicy::Eevdf, 30), Some((60, 7)));
        assert_eq!(cpu.avg_vruntime(None), None);
    }

    #[test]
    fn models_switch_at_their_points() {
        use Point::*;
        assert!(UserReturn.switches_under(Preempt::None));
        assert!(CondResched.switches_under(Preempt::None));
        assert!(!MightSleep.switches_under(Preempt::None));
        assert!(MightSleep.switches_under(Preempt::Voluntary));
        assert!(!Anywhere.switches_under(Preempt::Voluntary));
        assert!(Anywhere.switches_under(Preempt::Full));
        assert!(Anywhere.switches_under(Preempt::User));
        assert!(!Preempt::Full.preempts_kernel(1) && Preempt::User.preempts_kernel(1));
    }
}
