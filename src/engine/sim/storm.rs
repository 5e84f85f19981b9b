//! A storm on the simulator: every worker of the model's plan as a simulated
//! thread on `spec.cpus` virtual CPUs, each running its role's operation over
//! and over (then returning to user space and thinking, as the native loop
//! does) until the stop at the run's duration in virtual time. The monitor
//! samples every window in virtual time; the watchdog cuts the run off at
//! twice the duration, and a run whose threads all block for good ends when
//! its events run out. Either way it reports what it did and says so.

use super::kernel::Kernel;
use super::run::{self, Body, Ended, Timers};
use super::{Sim, SimSpec};
use crate::Result;
use crate::engine::RunConfig;
use crate::engine::storm::costs::Costs;
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::worker::{self, Worker};
use crate::engine::storm::{roles, window_for};
use crate::locks::platform::Platform;
use crate::locks::stats::ThreadStats;
use crate::locks::trace;
use crate::locks::{KindInfo, LockVisitor, RawRwLock};
use crate::metrics::ThreadCtx;
use crate::metrics::summary::{self, RunMeta, ThreadRecord};
use crate::metrics::verdict::RunProgress;
use crate::model::Role;
use crate::results::{RunReport, SimReport};
use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// Run `cfg` on the machine `spec`.
pub fn run(cfg: &RunConfig, spec: &SimSpec) -> Result<RunReport> {
    Ok(storm(cfg, spec, false)?.0)
}

/// As [`run`], with the run's context switches as the sched_switch
/// tracepoint prints them ([`super::trace`]).
pub fn run_traced(cfg: &RunConfig, spec: &SimSpec) -> Result<(RunReport, String)> {
    let (report, trace) = storm(cfg, spec, true)?;
    Ok((report, trace.unwrap_or_default()))
}

fn storm(cfg: &RunConfig, spec: &SimSpec, trace: bool) -> Result<(RunReport, Option<String>)> {
    let (rmap_kind, _) = cfg.kinds();
    rmap_kind.dispatch::<Sim, _>(SimStorm { cfg, spec, trace })
}

struct SimStorm<'a> {
    cfg: &'a RunConfig,
    spec: &'a SimSpec,
    /// Record the switches, and return them as text.
    trace: bool,
}

impl LockVisitor for SimStorm<'_> {
    type Output = Result<(RunReport, Option<String>)>;

    fn visit<L: RawRwLock + KindInfo>(self) -> Self::Output {
        let (cfg, spec) = (self.cfg, self.spec);
        let costs = Costs::of(&spec.machine.work);
        let ctx = Ctx::<L>::build(&cfg.model, cfg.kinds().1, costs, spec.cpus);
        let plan = worker::plan(&ctx.workload);
        let workers: Vec<RefCell<Worker>> = plan
            .iter()
            .enumerate()
            .map(|(i, &p)| RefCell::new(Worker::new(p, i, cfg.seed, ctx.world.page_capacity())))
            .collect();
        let done: Vec<Cell<u64>> = plan.iter().map(|_| Cell::new(0)).collect();
        let bodies: Vec<Body<'_>> = (0..plan.len())
            .map(|i| {
                let (ctx, w, done) = (&ctx, &workers[i], &done[i]);
                Box::new(move || work(ctx, &mut w.borrow_mut(), done)) as Body<'_>
            })
            .collect();
        let mut kernel = Kernel::new(
            &spec.machine,
            spec.cpus,
            spec.preempt,
            plan.len(),
            cfg.pin.as_ref(),
            cfg.seed,
        );
        if self.trace {
            kernel.record_switches();
        }
        let mut stats: Vec<ThreadStats> = plan.iter().map(|_| ThreadStats::default()).collect();
        let window = window_for(cfg.duration);
        let mut monitor = Monitor::new(window, spec.cpus, plan.iter().map(|p| p.role), &done);
        let duration_ps = cfg.duration.as_nanos() as u64 * 1_000;
        let timers = Timers {
            window_ps: window.as_nanos() as u64 * 1_000,
            on_window: Box::new(|_, busy| monitor.sample(busy)),
            stop_ps: duration_ps,
            on_stop: Box::new(|| ctx.stop.store(true, Relaxed)),
            cut_off_ps: 2 * duration_ps,
        };
        let mut ended = run::run(kernel, bodies, &mut stats, timers);
        let trace = ended.trace.take().map(|t| {
            let names: Vec<String> = plan
                .iter()
                .map(|p| format!("{}-{}", p.role, p.nth))
                .collect();
            t.to_ftrace(&names, spec.cpus)
        });
        let mut progress = monitor.progress;
        progress.watchdog_fired = ended.cut_off || ended.unfinished > 0;
        let threads: Vec<ThreadRecord> = workers
            .into_iter()
            .zip(&mut stats)
            .zip(&ended.threads)
            .zip(&done)
            .enumerate()
            .map(|(i, (((w, stats), end), done))| {
                let w = w.into_inner();
                if trace::on() {
                    let name = format!("{}-{}", w.role, w.nth);
                    trace::collect(i as u32, &name, stats.take_trace());
                }
                let mut record = w.local;
                record.lock = stats.take();
                record.ctx = ThreadCtx {
                    voluntary: end.nvcsw,
                    involuntary: end.nivcsw,
                    cpu_ns: end.cpu_ns,
                };
                if record.lifetime_ns == 0 {
                    record.lifetime_ns = ended.at_ps / 1_000;
                }
                ThreadRecord {
                    role: w.role,
                    ops: done.get(),
                    record,
                }
            })
            .collect();
        let meta = RunMeta {
            model: cfg.model_path.display().to_string(),
            engine: "sim".into(),
            lock: cfg.lock,
            threads: cfg.model.workload.scaled_threads(),
            cpus: spec.cpus as u32,
            seed: cfg.seed,
            overrides: cfg.overrides.clone(),
        };
        let secs = cfg.duration.as_secs_f64();
        let mut report = summary::report(meta, &threads, progress, secs);
        report.sim = Some(sim_report(spec, &ended));
        Ok((report, trace))
    }
}

/// One simulated worker's life: operate, time it in virtual time, count it,
/// return to user space (a preemption point), think; until the stop. The
/// two clock reads that time an operation cost what the profile's
/// `work.clock_ns` says, as the native loop's do (the platform's clock).
/// (`L`'s platform is [`Sim`]: the only one [`run`] dispatches to.)
fn work<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker, done: &Cell<u64>) {
    type P<L> = <L as RawRwLock>::Platform;
    let think_ns = w.spec(ctx).think_us * 1_000;
    let role = w.role;
    while !ctx.stop.load(Relaxed) {
        let t0 = P::<L>::now_ns();
        let outcome = roles::op(role, ctx, w);
        if w.local.note(outcome, P::<L>::now_ns() - t0) {
            done.set(done.get() + 1);
        }
        P::<L>::return_to_user();
        P::<L>::user_work(think_ns);
    }
    // From the run's start, virtual time 0: a thread that waited for its
    // first turn on a CPU was alive, as a native thread is from its spawn.
    w.local.lifetime_ns = P::<L>::now_ns();
}

/// The simulated monitor: per window, each role's done operations and the
/// CPUs' busy share.
struct Monitor<'a> {
    window_ps: u64,
    cpus: u64,
    roles: Vec<Role>,
    done: &'a [Cell<u64>],
    last_done: Vec<u64>,
    last_busy: u64,
    progress: RunProgress,
}

impl<'a> Monitor<'a> {
    fn new(
        window: Duration,
        cpus: usize,
        roles: impl Iterator<Item = Role>,
        done: &'a [Cell<u64>],
    ) -> Monitor<'a> {
        let mut progress = RunProgress {
            window_ns: window.as_nanos() as u64,
            ..RunProgress::default()
        };
        progress
            .roles
            .resize_with(Role::ALL.len(), Default::default);
        Monitor {
            window_ps: window.as_nanos() as u64 * 1_000,
            cpus: cpus as u64,
            roles: roles.collect(),
            done,
            last_done: vec![0; done.len()],
            last_busy: 0,
            progress,
        }
    }

    /// A window ended with the CPUs busy `busy_ps` in all since the start.
    fn sample(&mut self, busy_ps: u64) {
        let share = (busy_ps - self.last_busy) as f64 / (self.window_ps * self.cpus) as f64;
        self.progress.cpu_busy.push(share.min(1.0));
        self.last_busy = busy_ps;
        let mut per_role = [0u64; Role::ALL.len()];
        for (i, d) in self.done.iter().enumerate() {
            per_role[self.roles[i] as usize] += d.get() - self.last_done[i];
            self.last_done[i] = d.get();
        }
        for (r, n) in per_role.iter().enumerate() {
            self.progress.roles[r].ops_per_window.push(*n);
        }
    }
}

/// The simulator's own figures for the report.
fn sim_report(spec: &SimSpec, ended: &Ended) -> SimReport {
    let wall_s = ended.wall.as_secs_f64();
    SimReport {
        cpus: spec.cpus as u32,
        preempt: spec.preempt.name().into(),
        machine: spec.machine.name.clone(),
        events: ended.events,
        lines: ended.lines as u64,
        unfinished_threads: ended.unfinished as u32,
        wall_s,
        events_per_s: ended.events as f64 / wall_s.max(1e-9),
        peak_rss_mib: run::peak_rss_mib(),
    }
}
