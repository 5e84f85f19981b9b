//! The simulated machine's state and the operations the platform calls on
//! behalf of the running thread: its clock, its CPU, the cache lines, the
//! wait queues, the scheduler and the event queue.
//!
//! Every method runs on behalf of [`Kernel::current`], the thread the event
//! loop resumed. A method never suspends the thread itself (it cannot: it
//! runs inside a borrow of the kernel); one that needs the thread to wait
//! says so by returning [`Suspend::Yes`] after arranging its wake-up, and the
//! platform suspends the coroutine once the borrow is released.
//!
//! Time: each thread has its own clock (`now`, picoseconds), which its
//! accesses and work advance. The event loop always resumes the thread with
//! the earliest pending time, and a thread about to touch shared state first
//! yields its turn if another event is due earlier ([`Kernel::take_turn`]),
//! so every access to a line happens in virtual-time order.

use super::cache::{Access, LineCosts, LineId, Lines, Outcome, Slot, ps};
use super::eevdf;
use super::events::Events;
use super::noise::Noise;
use super::sched::{Cpu, Point, Preempt, SchedPs};
use super::trace::{PrevState, SchedTrace, Switch, Wakeup};
use crate::engine::cpus::CpuList;
use crate::locks::platform::{ParkToken, UnparkToken};
use crate::model::machine::{LineService, MachineProfile, SchedPolicy};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use rustc_hash::FxHashMap;
use std::collections::{BTreeSet, VecDeque};

/// What an access does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Go {
    /// Done: take or change the value now.
    Hit,
    /// Another event is due first: suspend, then ask again.
    Turn,
    /// Suspend until the line arrives, then take or change the value.
    Miss,
}

/// Whether the calling platform function must suspend the coroutine now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Suspend {
    Yes,
    No,
}

/// A thread's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// On its CPU (possibly suspended: waiting its turn, in a charge, spinning).
    Running,
    /// In a run queue.
    Runnable,
    /// Parked on a wait queue.
    Parked,
    /// Its body returned.
    Done,
}

/// What a running thread is suspended for: decides whether a preemption
/// may cut the wait short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Not suspended, or waiting only for its turn in time order.
    Turn,
    /// Doing `user` (user mode) or kernel work until its pending event.
    Work { user: bool },
    /// Spinning on the lines of its watch set.
    Spin,
    /// Waiting for a line to move to it.
    Move,
}

/// One simulated thread.
#[derive(Debug)]
pub struct Thread {
    pub state: State,
    pub wait: Wait,
    /// Its CPU while running, else the CPU it last ran on.
    pub cpu: usize,
    /// The one CPU it may run on (sched_setaffinity to one CPU, as the
    /// native engine's `--pin` does), or None: any.
    pinned: Option<usize>,
    /// Its clock, picoseconds.
    pub now: u64,
    /// Bumped whenever its pending events are cancelled.
    pub generation: u32,
    /// Bumped as each spin starts: the lines it watches are registered with
    /// this, not the generation, so that a kick (its slice may now end,
    /// which moves its pending event earlier) leaves them watched. Keyed by
    /// the generation, a spin kicked when a wakee joined its CPU's queue
    /// missed every write until its slice ended: a user-space waiter on a
    /// bucket lock whose holder had released it 2 us later spun to the tick,
    /// 3.7 ms, while the other CPU idled (synchro, rwsem-fifo, 2 CPUs).
    spin: u32,
    /// When its pending event (end of work, spin deadline) is due, while
    /// suspended in work or a spin; u64::MAX when none is.
    due: u64,
    /// preempt_disable() depth.
    pub preempt_count: u32,
    /// Lines read since its last spin hint, with the version each read saw.
    watch: Vec<(Slot, u64)>,
    /// The line of the access in progress (between `access` and `accessed`).
    accessing: Option<Slot>,
    /// What an unparker left for it.
    unparked: Option<UnparkToken>,
    /// CPU time received (CFS virtual runtime, all weights equal), ps.
    pub vruntime: u64,
    /// EEVDF: the virtual deadline of its request, and the lag it slept
    /// with (V minus its virtual runtime when it blocked), ps.
    deadline: u64,
    vlag: i64,
    /// EEVDF: blocked but still in its CPU's queue (DELAY_DEQUEUE): it slept
    /// ahead of V, and stays counted in V until picked or woken.
    delayed: bool,
    /// Context switches: blocked (voluntary) / preempted or yielded (involuntary).
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// CPU time it ran, ps: what getrusage's utime + stime count, counted
    /// as each run on a CPU ends (a run the watchdog cut off is not), with
    /// the context switch into each run.
    pub cpu_ps: u64,
    /// Switched out, other than by its own sched_yield(), since its last
    /// park or unpark: the parking code and data are cold for the next.
    parking_cold: bool,
}

impl Thread {
    fn note_read(&mut self, line: Slot, version: u64) {
        match self.watch.iter_mut().find(|(l, _)| *l == line) {
            Some(entry) => entry.1 = version,
            None => self.watch.push((line, version)),
        }
    }
}

/// Machine figures of a run, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Lock-word accesses, and how many moved a line.
    pub accesses: u64,
    pub misses: u64,
    /// Context switches on all CPUs.
    pub switches: u64,
}

/// The machine's costs in picoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub pause: u64,
    pub sched: SchedPs,
    /// One RCU grace period (the profile's `work.rcu_gp_ns`).
    pub rcu_gp: u64,
    /// What every busy-wait takes beyond its length (the profile's
    /// `work.busy_wait_extra_ns`).
    pub busy_wait_extra: u64,
    /// One read of the clock (the profile's `work.clock_ns`): the lock code
    /// and the storm time themselves, natively at this price.
    pub clock: u64,
    pub noise: Noise,
}

/// Everything the simulation knows.
pub struct Kernel {
    pub preempt: Preempt,
    pub costs: Costs,
    threads: Vec<Thread>,
    cpus: Vec<Cpu>,
    /// Idle CPUs, lowest first.
    idle: BTreeSet<usize>,
    /// CPUs per die, for wake-up placement.
    cpus_per_die: usize,
    lines: Lines,
    /// Parked threads per key, FIFO (parking_lot_core's contract).
    queues: FxHashMap<usize, VecDeque<(u32, ParkToken)>>,
    /// Keys whose queue lock (the kernel's wait_lock) a thread holds.
    held_buckets: FxHashMap<usize, u32>,
    pub events: Events,
    pub current: u32,
    rng: Xoshiro256PlusPlus,
    /// Scratch for the spinners a write wakes (kept to reuse its memory).
    woken: Vec<u32>,
    seq: u64,
    /// After the run: every operation applies at once and nothing suspends.
    pub teardown: bool,
    pub counters: Counters,
    /// Every switch, when asked for ([`Kernel::record_switches`]).
    pub trace: Option<SchedTrace>,
}

impl Kernel {
    /// A machine of `cpus` CPUs of `profile` with `threads` threads, all
    /// runnable and started at time 0: thread i on `pin.cpu_for(i)` and held
    /// there, as the native engine pins its workers; without `pin`, on CPU
    /// i mod cpus and free to move. The caller checked `pin` against `cpus`.
    pub fn new(
        profile: &MachineProfile,
        cpus: usize,
        preempt: Preempt,
        threads: usize,
        pin: Option<&CpuList>,
        seed: u64,
    ) -> Kernel {
        let pinned = |i: usize| pin.map(|p| p.cpu_for(i));
        let s = &profile.sched;
        let costs = Costs {
            pause: ps(profile.cache.pause_ns),
            rcu_gp: ps(profile.work.rcu_gp_ns),
            busy_wait_extra: ps(profile.work.busy_wait_extra_ns),
            clock: ps(profile.work.clock_ns),
            noise: Noise {
                interval: ps(s.noise_interval_ns),
                mean: ps(s.noise_ns),
            },
            sched: SchedPs {
                ctx_switch: ps(s.ctx_switch_ns),
                wakeup: ps(s.wakeup_ns),
                wakeup_idle: ps(s.wakeup_idle_ns),
                wakeup_ipi: ps(s.wakeup_ipi_ns),
                resched_ipi: ps(s.resched_ipi_ns),
                sched_yield: ps(s.yield_ns),
                park_cold: ps(s.park_cold_ns),
                jitter: ps(s.jitter_ns),
                tick: ps(s.tick_ns).max(1),
                latency: ps(s.sched_latency_ns),
                min_granularity: ps(s.min_granularity_ns),
                wakeup_granularity: ps(s.wakeup_granularity_ns),
                policy: s.policy,
                base_slice: ps(s.base_slice_ns),
            },
        };
        let t = profile.topology;
        let first_deadline = costs.sched.base_slice;
        let mut k = Kernel {
            preempt,
            costs,
            threads: (0..threads)
                .map(|i| Thread {
                    state: State::Runnable,
                    wait: Wait::Turn,
                    cpu: pinned(i).unwrap_or(i % cpus),
                    pinned: pinned(i),
                    now: 0,
                    generation: 0,
                    spin: 0,
                    due: u64::MAX,
                    preempt_count: 0,
                    watch: Vec::new(),
                    accessing: None,
                    unparked: None,
                    vruntime: 0,
                    deadline: first_deadline,
                    vlag: 0,
                    delayed: false,
                    nvcsw: 0,
                    nivcsw: 0,
                    cpu_ps: 0,
                    parking_cold: false,
                })
                .collect(),
            cpus: (0..cpus).map(|_| Cpu::new()).collect(),
            idle: (0..cpus).collect(),
            cpus_per_die: (t.cores_per_die * t.threads_per_core).max(1) as usize,
            lines: Lines::new(cpus, t, LineCosts::new(&profile.cache)),
            queues: FxHashMap::default(),
            held_buckets: FxHashMap::default(),
            events: Events::default(),
            current: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            woken: Vec::new(),
            seq: 0,
            teardown: false,
            counters: Counters::default(),
            trace: None,
        };
        for tid in 0..threads as u32 {
            let cpu = k.threads[tid as usize].cpu;
            if k.cpus[cpu].current.is_none() {
                k.dispatch(cpu, tid, 0);
            } else {
                k.enqueue(tid, cpu, 0);
            }
        }
        k
    }

    /// Record every context switch from now on ([`SchedTrace`]).
    pub fn record_switches(&mut self) {
        self.trace = Some(SchedTrace::default());
    }

    fn trace_switch(
        &mut self,
        at: u64,
        cpu: usize,
        prev: Option<u32>,
        state: PrevState,
        next: Option<u32>,
    ) {
        if let Some(trace) = self.trace.as_mut() {
            trace.push(Switch {
                at_ps: at,
                cpu: cpu as u32,
                prev,
                state,
                next,
            });
        }
    }

    pub fn threads(&self) -> &[Thread] {
        &self.threads
    }

    pub fn cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Busy time of every CPU up to `now`, summed, picoseconds.
    pub fn busy_at(&self, now: u64) -> u64 {
        self.cpus.iter().map(|c| c.busy_at(now)).sum()
    }

    pub fn lines_touched(&self) -> usize {
        self.lines.len()
    }

    fn me(&mut self) -> &mut Thread {
        &mut self.threads[self.current as usize]
    }

    /// The running thread's clock, picoseconds.
    pub fn now(&self) -> u64 {
        self.threads[self.current as usize].now
    }

    /// The running thread's CPU.
    pub fn cpu(&self) -> usize {
        self.threads[self.current as usize].cpu
    }

    /// The event loop resumes `tid` at `at`.
    pub fn resume(&mut self, tid: u32, at: u64) {
        self.current = tid;
        let t = &mut self.threads[tid as usize];
        t.now = t.now.max(at);
        t.wait = Wait::Turn;
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    // ---- time order ----

    /// Before touching shared state: if another event is due before this
    /// thread's clock, queue this thread at its clock and suspend, so the
    /// earlier one happens first.
    pub fn take_turn(&mut self) -> Suspend {
        if self.teardown {
            return Suspend::No;
        }
        let now = self.now();
        if self.events.next_at().is_some_and(|at| at < now) {
            let me = self.current;
            let generation = self.me().generation;
            self.events.push(now, me, generation);
            self.me().wait = Wait::Turn;
            Suspend::Yes
        } else {
            Suspend::No
        }
    }

    // ---- cache lines ----

    /// The running thread accesses `line`, in time order: if another
    /// event is due earlier it first waits its turn ([`Go::Turn`]: suspend,
    /// then call again). A hit just costs time; a miss waits ([`Go::Miss`])
    /// until the line has moved to it (its turn in the line's queue, then
    /// the move). Either way the caller then takes or changes the value and
    /// calls [`Kernel::accessed`].
    /// The word naming `line` was freed: its address names a new line next.
    pub fn forget_line(&mut self, line: LineId) {
        self.lines.forget(line);
    }

    pub fn access(&mut self, line: LineId, kind: Access) -> Go {
        if self.teardown {
            return Go::Hit;
        }
        if self.take_turn() == Suspend::Yes {
            return Go::Turn;
        }
        let (me, cpu, now) = (self.current, self.cpu(), self.now());
        let slot = self.lines.slot(line);
        self.me().accessing = Some(slot);
        self.counters.accesses += 1;
        match self.lines.access(slot, cpu, me, kind, now) {
            Outcome::Hit { at } => {
                self.me().now = at;
                Go::Hit
            }
            Outcome::Moving { at } => {
                self.counters.misses += 1;
                self.wait_move(me, at);
                Go::Miss
            }
            Outcome::Queued => {
                self.counters.misses += 1;
                self.me().wait = Wait::Move;
                Go::Miss
            }
        }
    }

    /// `tid`'s move completes at `at`.
    fn wait_move(&mut self, tid: u32, at: u64) {
        let t = &mut self.threads[tid as usize];
        t.wait = Wait::Move;
        let g = t.generation;
        self.events.push(at, tid, g);
    }

    /// After the running thread took or changed the value of the line it
    /// accessed (`moved`: the access was a miss): note what a read saw, wake
    /// the spinners of a write, and let the line serve its next queued move.
    pub fn accessed(&mut self, kind: Access, moved: bool) {
        let Some(line) = self.me().accessing.take() else {
            return;
        };
        if kind == Access::Read {
            let version = self.lines.version(line);
            self.me().note_read(line, version);
        } else {
            self.written(line);
        }
        if moved && let Some((next, at)) = self.lines.completed(line, self.now()) {
            self.wait_move(next, at);
        }
    }

    /// The running thread's write to `line` has landed (it applied the
    /// value now): the spinners on the line re-read it, served in the
    /// interconnect's order.
    fn written(&mut self, line: Slot) {
        let (writer, at) = (self.cpu(), self.now());
        let mut woken = std::mem::take(&mut self.woken);
        let threads = &self.threads;
        woken.extend(
            self.lines
                .written(line)
                .filter(|&(tid, spin)| {
                    let t = &threads[tid as usize];
                    t.spin == spin && t.state == State::Running && t.wait == Wait::Spin
                })
                .map(|(tid, _)| tid),
        );
        match self.lines.costs().service {
            LineService::Random => woken.shuffle(&mut self.rng),
            LineService::Nearest => {
                let lines = &self.lines;
                let threads = &self.threads;
                woken.sort_by_key(|&tid| {
                    let cpu = threads[tid as usize].cpu;
                    (lines.distance(writer, cpu), cpu)
                });
            }
        }
        for &tid in &woken {
            let t = &mut self.threads[tid as usize];
            t.generation += 1;
            let g = t.generation;
            self.events.push(at, tid, g);
        }
        woken.clear();
        self.woken = woken;
    }

    /// cpu_relax() in an unbounded busy-wait. A kernel spinner waits for a
    /// write to what it read (it polls at a constant rate and nothing else
    /// can run on its CPU); a user-space one ([`Preempt::User`]) polls once,
    /// since its poll count decides when it yields and each poll is a point
    /// where the tick may preempt it.
    #[inline]
    pub fn spin_hint(&mut self) -> Suspend {
        if self.preempt == Preempt::User {
            let one = self.now() + self.costs.pause;
            self.spin(Some(one))
        } else {
            self.spin(None)
        }
    }

    /// cpu_relax() in a busy-wait: if nothing the thread read since its last
    /// hint has changed, wait (spinning, on the CPU) until one of those lines
    /// is written or `deadline` passes; otherwise one PAUSE.
    pub fn spin(&mut self, deadline_ps: Option<u64>) -> Suspend {
        let pause = self.costs.pause;
        let now = self.now();
        // What was read since the last hint: taken, and handed back empty
        // (its memory kept for the next reads).
        let mut watch = std::mem::take(&mut self.me().watch);
        let changed = watch.iter().any(|&(l, v)| self.lines.version(l) != v);
        let expired = deadline_ps.is_some_and(|d| d <= now + pause);
        let suspend = if self.teardown || watch.is_empty() || changed || expired {
            self.me().now = now + pause;
            Suspend::No
        } else {
            self.wait_for_writes(&watch, deadline_ps);
            Suspend::Yes
        };
        watch.clear();
        self.me().watch = watch;
        suspend
    }

    /// Spin on the CPU until one of the `watch` lines is written or the
    /// deadline passes.
    fn wait_for_writes(&mut self, watch: &[(Slot, u64)], deadline_ps: Option<u64>) {
        let me = self.current;
        let t = self.me();
        t.generation += 1;
        t.spin += 1;
        t.wait = Wait::Spin;
        t.due = deadline_ps.unwrap_or(u64::MAX);
        let (g, spin) = (t.generation, t.spin);
        for &(line, _) in watch {
            self.lines.watch(line, me, spin);
        }
        if let Some(d) = deadline_ps {
            self.events.push(d, me, g);
        }
        self.cut_spin_at_slice_end();
    }

    /// A spin that a preemption may interrupt (`Preempt::User`, or full
    /// preemption outside preempt-disabled code) ends at the end of its CPU's
    /// slice when another thread waits for the CPU, so that the tick can
    /// switch a spinner out. Otherwise a spinner waiting for a preempted
    /// holder on its own CPU would wait forever.
    fn cut_spin_at_slice_end(&mut self) {
        if !self.preempt.preempts_kernel(self.me().preempt_count) {
            return;
        }
        let cpu = self.cpu();
        if let Some(end) = self.cpus[cpu].slice_end(&self.costs.sched) {
            let at = end.max(self.now());
            self.kick(cpu, at);
        }
    }

    // ---- work ----

    /// `work` picoseconds of work starting now on the running thread's CPU,
    /// stretched by the interruptions that CPU takes meanwhile ([`Noise`]).
    pub fn interrupted(&mut self, work: u64) -> u64 {
        let (cpu, now) = (self.cpu(), self.now());
        let next = &mut self.cpus[cpu].next_noise;
        work + self.costs.noise.stolen(next, now, work, &mut self.rng)
    }

    /// Start `left` picoseconds of work (user mode if `user`); returns when
    /// the thread must resume to go on: the end, or earlier where its slice
    /// ends and this work may be preempted. The caller suspends.
    pub fn work(&mut self, left: u64, user: bool) -> u64 {
        let now = self.now();
        let end = now + left;
        let cut = if self.preemptible(user) {
            let cpu = &self.cpus[self.cpu()];
            cpu.slice_end(&self.costs.sched)
                .map_or(end, |s| s.max(now).min(end))
        } else {
            end
        };
        let me = self.current;
        let t = self.me();
        t.wait = Wait::Work { user };
        t.due = cut;
        let g = t.generation;
        self.events.push(cut, me, g);
        cut
    }

    /// Whether a preemption may interrupt the running thread's `user` or
    /// kernel work now: user mode always (a resched IPI or the tick returns
    /// to user through schedule), kernel mode under full preemption outside
    /// preempt-disabled sections.
    fn preemptible(&self, user: bool) -> bool {
        let t = &self.threads[self.current as usize];
        user || self.preempt.preempts_kernel(t.preempt_count)
    }

    // ---- preemption ----

    pub fn preempt_disable(&mut self) {
        self.me().preempt_count += 1;
    }

    pub fn preempt_enable(&mut self) {
        let t = self.me();
        t.preempt_count = t.preempt_count.saturating_sub(1);
    }

    /// A preemption point of kind `point`: switch away if the model
    /// switches here, preemption is enabled, and a switch is due.
    pub fn preempt_point(&mut self, point: Point) -> Suspend {
        if self.teardown || !point.switches_under(self.preempt) {
            return Suspend::No;
        }
        let (cpu, now) = (self.cpu(), self.now());
        let user = point == Point::UserReturn;
        // Under `--preempt user` the threads are user-space code between
        // their syscalls and interrupts.
        let polls = !(self.preempt == Preempt::User && point == Point::Anywhere);
        let count = self.threads[self.current as usize].preempt_count;
        if (user || count == 0 || self.preempt.preempts_kernel(count))
            && self.cpus[cpu].resched_due(&self.costs.sched, now, polls)
            && !self.keeps_cpu(cpu, now)
        {
            self.switch_out(Leave::Preempted);
            Suspend::Yes
        } else {
            Suspend::No
        }
    }

    /// What the running thread's park or unpark adds for its code and data
    /// being cold, ps: `sched.park_cold_ns` if it is the first since the
    /// thread was switched out other than by its own yield, else 0.
    pub fn take_parking_cold(&mut self) -> u64 {
        let me = self.current as usize;
        if std::mem::take(&mut self.threads[me].parking_cold) {
            self.costs.sched.park_cold
        } else {
            0
        }
    }

    /// sched_yield(): to the back of the queue if anyone waits. Under EEVDF
    /// the yielder forfeits first, and the pick that follows counts it: if
    /// it is still the eligible thread with the earliest deadline, it runs
    /// on without a switch.
    pub fn yield_now(&mut self) -> Suspend {
        let cpu = self.cpu();
        if self.teardown || self.cpus[cpu].queued() == 0 {
            return Suspend::No;
        }
        if self.costs.sched.policy == SchedPolicy::Eevdf {
            let (me, now) = (self.current, self.now());
            self.account_run(cpu, me, now);
            self.cpus[cpu].exec_start = now;
            let sched = self.costs.sched;
            let t = &self.threads[me as usize];
            let avg = self.cpus[cpu]
                .avg_vruntime(Some(t.vruntime))
                .expect("a thread runs");
            let t = &mut self.threads[me as usize];
            (t.vruntime, t.deadline) =
                eevdf::yielded(t.vruntime, t.deadline, avg, sched.base_slice);
            if self.keeps_cpu(cpu, now) {
                return Suspend::No;
            }
        }
        self.switch_out(Leave::Yielded);
        Suspend::Yes
    }

    /// Sleep `ps` off the CPU: the thread blocks and is woken when the time
    /// is up (a fault waiting for the disk, msleep).
    pub fn sleep(&mut self, ps: u64) -> Suspend {
        if self.teardown {
            return Suspend::No;
        }
        let (me, now) = (self.current, self.now());
        self.switch_out(Leave::Blocked);
        let g = self.threads[me as usize].generation;
        self.events.push_wake(now + ps, me, g);
        Suspend::Yes
    }

    /// A sleep's timer fired: wake `tid` if it is still in that sleep.
    pub fn timer_wake(&mut self, tid: u32, generation: u32, at: u64) {
        let t = &self.threads[tid as usize];
        if t.state == State::Parked && t.generation == generation {
            // The timer interrupt wakes it; no task pays.
            let _ = self.wake(tid, at, None);
        }
    }

    /// The running thread's body returned.
    pub fn exit(&mut self) {
        if !self.teardown {
            self.switch_out(Leave::Exited);
        }
    }

    // ---- parking ----

    /// Take the queue lock of `key` (the kernel's wait_lock, a spinlock on
    /// the line beside the lock word) if it is free; else spin on its line
    /// until the holder's release writes it ([`Suspend::Yes`]: try again).
    pub fn lock_bucket(&mut self, key: usize) -> Suspend {
        if self.teardown {
            return Suspend::No;
        }
        if self.held_buckets.contains_key(&key) {
            let me = self.current;
            let t = self.me();
            t.generation += 1;
            t.spin += 1;
            t.wait = Wait::Spin;
            t.due = u64::MAX;
            let spin = t.spin;
            let slot = self.lines.slot(key);
            self.lines.watch(slot, me, spin);
            self.cut_spin_at_slice_end();
            return Suspend::Yes;
        }
        self.held_buckets.insert(key, self.current);
        Suspend::No
    }

    /// Release the queue lock of `key` (the caller then writes its line).
    pub fn unlock_bucket(&mut self, key: usize) {
        self.held_buckets.remove(&key);
    }

    /// Whether the running thread holds the queue lock of `key`.
    pub fn holds_bucket(&self, key: usize) -> bool {
        self.held_buckets.get(&key) == Some(&self.current)
    }

    /// Queue the running thread on `key` (under its queue lock).
    pub fn enqueue_parked(&mut self, key: usize, token: ParkToken) {
        let me = self.current;
        self.me().unparked = None;
        self.queues.entry(key).or_default().push_back((me, token));
    }

    /// Take `key`'s queue out to walk it (under its queue lock).
    pub fn take_queue(&mut self, key: usize) -> VecDeque<(u32, ParkToken)> {
        self.queues.remove(&key).unwrap_or_default()
    }

    /// Put back what a walk left of `key`'s queue (kept when empty too, so
    /// that its memory serves the next waiters).
    pub fn put_queue(&mut self, key: usize, rest: VecDeque<(u32, ParkToken)>) {
        self.queues.insert(key, rest);
    }

    /// After parking: the unpark token if an unparker already came, else
    /// block (the CPU runs someone else) until one does.
    pub fn block_parked(&mut self) -> Result<UnparkToken, Suspend> {
        if let Some(token) = self.me().unparked.take() {
            return Ok(token);
        }
        assert!(!self.teardown, "a thread parked during teardown");
        self.switch_out(Leave::Blocked);
        Err(Suspend::Yes)
    }

    /// Hand `token` to parked thread `tid` and make it runnable. Returns
    /// what the wake-up costs the waker, picoseconds (try_to_wake_up, and
    /// the IPI when it sent one): 0 when `tid` was not asleep.
    pub fn unpark(&mut self, tid: u32, token: UnparkToken) -> u64 {
        let now = self.now();
        let t = &mut self.threads[tid as usize];
        t.unparked = Some(token);
        let asleep = t.state == State::Parked && !self.teardown;
        if !asleep {
            return 0;
        }
        let sched = self.costs.sched;
        let mine = self.cpu();
        match self.wake(tid, now, Some((mine, self.current))) {
            Some(cpu) if cpu != mine => sched.wakeup_ipi,
            _ => sched.wakeup,
        }
    }

    // ---- the scheduler ----

    /// Make the parked `tid` runnable at `at` (try_to_wake_up) for `waker`
    /// (its CPU and thread; None: a timer). Returns the CPU it sent an IPI
    /// to: the wakee's, if idle or to be preempted.
    fn wake(&mut self, tid: u32, at: u64, waker: Option<(usize, u32)>) -> Option<usize> {
        let t = &self.threads[tid as usize];
        let delayed = t.delayed;
        let cpu = if delayed {
            t.cpu
        } else {
            t.pinned.unwrap_or_else(|| self.select_cpu(t.cpu))
        };
        if let Some(trace) = self.trace.as_mut() {
            trace.push_wakeup(Wakeup {
                at_ps: at,
                cpu: waker.map_or(cpu, |(c, _)| c) as u32,
                waker: waker.map(|(_, t)| t),
                wakee: tid,
                target: cpu as u32,
            });
        }
        // A busy CPU's queue gets the wakee a wake-up latency from now; it
        // is placed, and the running thread's claim weighed against it, at
        // that one moment, as ttwu_do_activate does both under the run
        // queue's lock. (Placed now, a lag-0 wakee would find the running
        // thread a latency ahead of V, so ineligible, and preempt it.)
        let arriving = self.arriving(cpu, at);
        let busy = self.cpus[cpu].current.is_some() && !arriving;
        let woken_at = at;
        let at = if busy {
            at + self.latency(self.costs.sched.wakeup)
        } else {
            at
        };
        if delayed {
            self.requeue_delayed(tid, at);
        } else {
            self.place(tid, cpu, at);
        }
        if self.cpus[cpu].current.is_none() {
            // The idle CPU switches when the wakee gets there, as natively
            // sched_switch fires after the wake-up latency.
            let latency = self.latency(self.costs.sched.wakeup_idle);
            self.trace_switch(at + latency, cpu, None, PrevState::Runnable, Some(tid));
            self.dispatch(cpu, tid, at + latency);
            self.cpus[cpu].waking = true;
            return Some(cpu);
        }
        if arriving {
            self.join_wake_list(tid, cpu);
            return None;
        }
        self.enqueue(tid, cpu, at);
        let current = self.cpus[cpu].current.expect("checked above");
        let running = self.vruntime_at(current, at);
        let sched = &self.costs.sched;
        let preempts = match sched.policy {
            SchedPolicy::Cfs => sched.wakeup_preempts(running, self.threads[tid as usize].vruntime),
            SchedPolicy::Eevdf => {
                let c = &self.cpus[cpu];
                let avg = c.avg_vruntime(Some(running)).expect("a thread runs");
                let pick = c.best_eligible(avg).map(|(.., t, _)| t);
                let deadline = self.threads[current as usize].deadline;
                eevdf::wakeup_preempts(running, deadline, avg, pick == Some(tid))
            }
        };
        if preempts {
            // Another CPU's wake-up reaches this one by the reschedule IPI;
            // the waker's own CPU sees its flag at once.
            let remote = waker.is_some_and(|(c, _)| c != cpu);
            let interrupt = if remote {
                woken_at + self.latency(self.costs.sched.resched_ipi)
            } else {
                at
            }
            .max(at);
            self.cpus[cpu].request_resched(at, interrupt);
            self.kick(cpu, interrupt);
        }
        preempts.then_some(cpu)
    }

    /// Whether at `at` `cpu` is still coming out of idle for the thread it
    /// was woken for, which has not run yet (not a switch between threads).
    pub fn arriving(&self, cpu: usize, at: u64) -> bool {
        self.cpus[cpu].arriving(at)
    }

    /// Wake `tid` onto `cpu` while that CPU is still coming out of idle for
    /// an earlier wakee. Natively a wake-up of an idle CPU goes on its wake
    /// list with an IPI (ttwu_queue_wakelist); later wakers add to the list
    /// and send none, and when the CPU gets there it activates the whole
    /// list (sched_ttwu_pending) and schedule() picks among them. So no
    /// wakee preempts one that has not run yet: the pick is made once, at
    /// the CPU's arrival, among all of them.
    fn join_wake_list(&mut self, tid: u32, cpu: usize) {
        let arrival = self.cpus[cpu].exec_start;
        let pending = self.cpus[cpu]
            .current
            .take()
            .expect("an arriving CPU has its wakee");
        // The earlier wakee's resumption at the arrival is cancelled.
        self.threads[pending as usize].generation += 1;
        self.enqueue(pending, cpu, arrival);
        self.enqueue(tid, cpu, arrival);
        let (_, next) = self.pick_next(cpu, None).expect("two were queued");
        if next != pending
            && let Some(trace) = self.trace.as_mut()
        {
            trace.rename_next(arrival, cpu, pending, next);
        }
        self.dispatch(cpu, next, arrival);
        self.cpus[cpu].waking = true;
    }

    /// Give the woken `tid` its virtual runtime (and EEVDF deadline) on
    /// `cpu` at `at` (place_entity).
    fn place(&mut self, tid: u32, cpu: usize, at: u64) {
        let sched = self.costs.sched;
        let c = &self.cpus[cpu];
        match sched.policy {
            SchedPolicy::Cfs => {
                let t = &mut self.threads[tid as usize];
                t.vruntime = sched.place(t.vruntime, c.min_vruntime);
            }
            SchedPolicy::Eevdf => {
                let running = c.current.map(|cur| self.vruntime_at(cur, at));
                let avg = c.avg_vruntime(running).unwrap_or(c.min_vruntime);
                let t = &mut self.threads[tid as usize];
                (t.vruntime, t.deadline) = eevdf::place(
                    avg,
                    c.nr_running(),
                    c.min_vruntime,
                    t.vlag,
                    sched.base_slice,
                );
            }
        }
    }

    /// EEVDF: wake a delayed `tid` where it is queued (ttwu_runnable: it
    /// never left its CPU, so no CPU is chosen). Its entry goes, to come back
    /// as a runnable one; a positive lag is dropped (DELAY_ZERO).
    fn requeue_delayed(&mut self, tid: u32, at: u64) {
        let base_slice = self.costs.sched.base_slice;
        let cpu = self.threads[tid as usize].cpu;
        let running = self.cpus[cpu].current.map(|c| self.vruntime_at(c, at));
        let c = &mut self.cpus[cpu];
        c.take(tid);
        let avg = c.avg_vruntime(running);
        let t = &mut self.threads[tid as usize];
        t.delayed = false;
        if let Some(avg) = avg
            && t.vruntime < avg
        {
            (t.vruntime, t.deadline) = (avg, avg + base_slice);
        }
    }

    /// The next thread `cpu` runs, if any: the policy's pick, counting
    /// `staying` (the virtual runtime of a thread about to be queued again)
    /// in V. A delayed thread picked leaves the queue for good with the lag
    /// it has then, and the pick goes on (pick_next_entity).
    fn pick_next(&mut self, cpu: usize, staying: Option<u64>) -> Option<(u64, u32)> {
        let sched = self.costs.sched;
        loop {
            let avg = match sched.policy {
                SchedPolicy::Cfs => 0,
                SchedPolicy::Eevdf => self.cpus[cpu].avg_vruntime(staying).unwrap_or(0),
            };
            let (v, tid) = self.cpus[cpu].pick(sched.policy, avg)?;
            if !self.threads[tid as usize].delayed {
                return Some((v, tid));
            }
            self.dequeue_delayed(tid, cpu, avg);
        }
    }

    /// A delayed `tid` leaves `cpu`'s queue (whose V, it counted, is `avg`)
    /// with the lag it has now, but never a positive one (DELAY_ZERO,
    /// finish_delayed_dequeue_entity): the pick meets it only once it is
    /// eligible, and a sleeper is not to earn lag while it waits to leave.
    fn dequeue_delayed(&mut self, tid: u32, cpu: usize, avg: u64) {
        let sched = self.costs.sched;
        self.cpus[cpu].take(tid);
        let t = &mut self.threads[tid as usize];
        t.delayed = false;
        t.vlag = eevdf::lag(avg, t.vruntime, sched.base_slice, sched.tick).min(0);
    }

    /// EEVDF, at a reschedule of `cpu` at `now`: bring the running thread's
    /// virtual runtime up to date, start a new request if it has reached its
    /// deadline, and say whether it is still the pick (then it goes on, and
    /// no switch happens). CFS always switches.
    fn keeps_cpu(&mut self, cpu: usize, now: u64) -> bool {
        let sched = self.costs.sched;
        if sched.policy == SchedPolicy::Cfs {
            return false;
        }
        let me = self.cpus[cpu]
            .current
            .expect("a running thread reschedules");
        self.account_run(cpu, me, now);
        self.cpus[cpu].exec_start = now;
        let t = &mut self.threads[me as usize];
        t.deadline = eevdf::renew(t.vruntime, t.deadline, sched.base_slice);
        self.cpus[cpu].request = t.deadline - t.vruntime;
        let (vruntime, deadline) = (t.vruntime, t.deadline);
        // Delayed threads the pick would meet first leave the queue.
        let (avg, best) = loop {
            let c = &self.cpus[cpu];
            let avg = c.avg_vruntime(Some(vruntime)).expect("a thread runs");
            match c.best_eligible(avg) {
                Some((_, _, tid, _)) if self.threads[tid as usize].delayed => {
                    self.dequeue_delayed(tid, cpu, avg);
                }
                best => break (avg, best.map(|(v, .., d)| (v, d))),
            }
        };
        let keeps = eevdf::keeps_cpu(vruntime, deadline, avg, best);
        if keeps {
            self.cpus[cpu].resched = None;
        }
        keeps
    }

    /// One switch or wake-up latency of mean `mean`, drawn with the run's
    /// generator ([`SchedPs::draw`]).
    fn latency(&mut self, mean: u64) -> u64 {
        self.costs.sched.draw(mean, &mut self.rng)
    }

    /// The CPU a thread last on `prev` wakes on.
    fn select_cpu(&self, prev: usize) -> usize {
        if self.cpus[prev].current.is_none() {
            return prev;
        }
        let die = prev / self.cpus_per_die * self.cpus_per_die;
        self.idle
            .range(die..die + self.cpus_per_die)
            .next()
            .or_else(|| self.idle.first())
            .copied()
            .unwrap_or(prev)
    }

    /// CPU time of `tid` up to `at`, running time so far included.
    fn vruntime_at(&self, tid: u32, at: u64) -> u64 {
        let t = &self.threads[tid as usize];
        let cpu = &self.cpus[t.cpu];
        let running = if cpu.current == Some(tid) {
            at.saturating_sub(cpu.exec_start)
        } else {
            0
        };
        t.vruntime + running
    }

    /// Put runnable `tid` in `cpu`'s queue at `at`.
    fn enqueue(&mut self, tid: u32, cpu: usize, at: u64) {
        let seq = self.next_seq();
        let t = &mut self.threads[tid as usize];
        t.state = State::Runnable;
        t.cpu = cpu;
        t.now = t.now.max(at);
        self.cpus[cpu].enqueue(t.vruntime, seq, tid, t.deadline);
        // Its slice may now end: cut the current thread's interruptible wait.
        if let Some(end) = self.cpus[cpu].slice_end(&self.costs.sched) {
            self.kick(cpu, end.max(at));
        }
    }

    /// Make `cpu`'s current thread look at its need to reschedule by `at`, if
    /// it is in a wait a preemption may cut short (preemptible work, or a
    /// preemptible spin): its pending event moves earlier.
    fn kick(&mut self, cpu: usize, at: u64) {
        let Some(cur) = self.cpus[cpu].current else {
            return;
        };
        let preempt = self.preempt;
        let t = &mut self.threads[cur as usize];
        let interruptible = match t.wait {
            Wait::Work { user } => user || preempt.preempts_kernel(t.preempt_count),
            Wait::Spin => preempt.preempts_kernel(t.preempt_count),
            Wait::Turn | Wait::Move => false,
        };
        let at = at.max(t.now);
        if interruptible && t.state == State::Running && at < t.due {
            t.generation += 1;
            t.due = at;
            let g = t.generation;
            self.events.push(at, cur, g);
        }
    }

    /// Run `tid` on `cpu` from `at`.
    fn dispatch(&mut self, cpu: usize, tid: u32, at: u64) {
        self.idle.remove(&cpu);
        let c = &mut self.cpus[cpu];
        c.current = Some(tid);
        c.exec_start = at;
        // A switch, not a wake-up from idle (whose caller sets it again).
        c.waking = false;
        c.resched = None;
        let t = &mut self.threads[tid as usize];
        c.request = t.deadline.saturating_sub(t.vruntime);
        t.state = State::Running;
        t.wait = Wait::Turn;
        t.cpu = cpu;
        t.now = t.now.max(at);
        t.generation += 1;
        t.due = u64::MAX;
        let (now, g) = (t.now, t.generation);
        self.events.push(now, tid, g);
        self.update_min_vruntime(cpu);
    }

    /// The running thread leaves its CPU; the CPU switches to the next
    /// runnable thread or goes idle.
    fn switch_out(&mut self, why: Leave) {
        let (me, cpu, now) = (self.current, self.cpu(), self.now());
        self.account_run(cpu, me, now);
        self.cpus[cpu].current = None;
        let t = &mut self.threads[me as usize];
        t.generation += 1;
        t.due = u64::MAX;
        t.watch.clear();
        t.parking_cold |= !matches!(why, Leave::Yielded);
        let c = &self.cpus[cpu];
        let sched = self.costs.sched;
        let eevdf = sched.policy == SchedPolicy::Eevdf;
        // EEVDF's V with the leaving thread counted (CFS has no use for it).
        let with_me = if eevdf {
            c.avg_vruntime(Some(t.vruntime))
                .expect("counts the thread leaving")
        } else {
            0
        };
        let queued_max = c.max_queued_vruntime();
        match why {
            Leave::Blocked => {
                t.state = State::Parked;
                t.nvcsw += 1;
                if eevdf {
                    t.delayed = t.vruntime > with_me;
                    t.vlag = eevdf::lag(with_me, t.vruntime, sched.base_slice, sched.tick);
                }
            }
            Leave::Preempted => t.nivcsw += 1,
            // EEVDF's forfeit was taken in `yield_now`.
            Leave::Yielded if eevdf => t.nivcsw += 1,
            Leave::Yielded => {
                t.nivcsw += 1;
                t.vruntime = t.vruntime.max(queued_max.unwrap_or(0));
            }
            Leave::Exited => t.state = State::Done,
        }
        self.counters.switches += 1;
        let stays = matches!(why, Leave::Preempted | Leave::Yielded);
        let t = &self.threads[me as usize];
        if t.delayed {
            // Still queued, not runnable: it counts in V until it goes.
            let (v, d) = (t.vruntime, t.deadline);
            let seq = self.next_seq();
            self.cpus[cpu].enqueue(v, seq, me, d);
        }
        // EEVDF's V counts a thread that stays runnable (put back before the pick).
        let staying = stays.then_some(self.threads[me as usize].vruntime);
        let next = match self.pick_next(cpu, staying) {
            Some(next) => Some(next),
            None if stays => None,
            None => self.pull(cpu),
        };
        if stays {
            self.enqueue(me, cpu, now);
        }
        // Nobody else wanted the CPU: the thread that left gets it back.
        let next = next.or_else(|| self.pick_next(cpu, None));
        // The thread picked again made no switch (schedule() traces none).
        if next.is_none_or(|(_, tid)| tid != me) {
            self.trace_switch(now, cpu, Some(me), why.state(), next.map(|(_, tid)| tid));
        }
        match next {
            Some((_, tid)) => {
                let latency = self.latency(self.costs.sched.ctx_switch);
                // The switch is kernel time of the tasks it switches, as
                // getrusage counts it; here the incoming one's.
                self.threads[tid as usize].cpu_ps += latency;
                self.dispatch(cpu, tid, now + latency);
            }
            None => {
                self.idle.insert(cpu);
            }
        }
    }

    /// Charge `cpu`'s running thread `me` its run from `exec_start` to `now`:
    /// the CPU's busy time, the thread's virtual runtime and CPU time
    /// (update_curr).
    fn account_run(&mut self, cpu: usize, me: u32, now: u64) {
        let c = &mut self.cpus[cpu];
        let ran = now.saturating_sub(c.exec_start);
        c.busy += ran;
        let t = &mut self.threads[me as usize];
        t.vruntime += ran;
        t.cpu_ps += ran;
    }

    /// Newidle balance: take a waiting thread that may move from the busiest
    /// other queue. EEVDF places it on this CPU's empty queue at its
    /// reference time, its deadline as far ahead as before (PLACE_REL_DEADLINE).
    fn pull(&mut self, cpu: usize) -> Option<(u64, u32)> {
        let busiest = (0..self.cpus.len())
            .filter(|&c| c != cpu)
            .max_by_key(|&c| (self.cpus[c].queued(), std::cmp::Reverse(c)))?;
        let threads = &self.threads;
        let movable = |tid: u32| {
            let t = &threads[tid as usize];
            t.pinned.is_none() && !t.delayed
        };
        let (v, tid) = self.cpus[busiest].steal(movable)?;
        if self.costs.sched.policy == SchedPolicy::Cfs {
            return Some((v, tid));
        }
        let here = self.cpus[cpu].min_vruntime;
        let t = &mut self.threads[tid as usize];
        t.deadline = here + t.deadline.saturating_sub(t.vruntime);
        t.vruntime = here;
        Some((here, tid))
    }

    /// cfs_rq->min_vruntime: the least virtual runtime of the running and
    /// waiting threads, never moving back.
    fn update_min_vruntime(&mut self, cpu: usize) {
        let c = &self.cpus[cpu];
        let current = c.current.map(|t| self.threads[t as usize].vruntime);
        let least = match (current, c.min_queued_vruntime()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(v) = least {
            let c = &mut self.cpus[cpu];
            c.min_vruntime = c.min_vruntime.max(v);
        }
    }
}

/// Why a thread leaves its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leave {
    Blocked,
    Preempted,
    Yielded,
    Exited,
}

impl Leave {
    /// How the sched_switch tracepoint prints it.
    fn state(self) -> PrevState {
        match self {
            Leave::Blocked => PrevState::Blocked,
            Leave::Preempted | Leave::Yielded => PrevState::Runnable,
            Leave::Exited => PrevState::Dead,
        }
    }
}
