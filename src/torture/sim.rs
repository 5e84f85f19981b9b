//! A torture run on the simulator: the same threads' loop ([`super::worker`])
//! as simulated threads on `spec.cpus` virtual CPUs, one per thread's start
//! CPU round-robin, for the run's duration in virtual time. The stop flag is
//! raised at the duration; the watchdog cuts the run off at twice it, and
//! threads whose bodies did not return by then are reported stuck.

use super::config::Config;
use super::engine::{Exit, Outcome, collect};
use super::worker::Shared;
use crate::engine::sim::kernel::Kernel;
use crate::engine::sim::run::{self, Body, Timers};
use crate::engine::sim::{Sim, SimSpec};
use crate::locks::stats::ThreadStats;
use crate::locks::{KindInfo, LockVisitor, RawRwLock};
use std::cell::RefCell;
use std::sync::atomic::Ordering::Relaxed;

/// Run `cfg` on the machine `spec`.
pub fn run(cfg: &Config, spec: &SimSpec) -> Outcome {
    cfg.kind.dispatch::<Sim, _>(SimRun { cfg, spec })
}

struct SimRun<'a> {
    cfg: &'a Config,
    spec: &'a SimSpec,
}

impl LockVisitor for SimRun<'_> {
    type Output = Outcome;

    fn visit<L: RawRwLock + KindInfo>(self) -> Outcome {
        let (cfg, spec) = (self.cfg, self.spec);
        let roles = cfg.thread_roles();
        let shared = Shared::<L>::new(cfg, roles.len());
        let ends: Vec<RefCell<Option<Exit>>> = roles.iter().map(|_| RefCell::new(None)).collect();
        let bodies: Vec<Body<'_>> = roles
            .iter()
            .enumerate()
            .map(|(me, &role)| {
                let (shared, end) = (&shared, &ends[me]);
                Box::new(move || {
                    let done = shared.worker(None, me, role);
                    *end.borrow_mut() = Some(Exit::Done(Box::new(done)));
                }) as Body<'_>
            })
            .collect();
        let kernel = Kernel::new(
            &spec.machine,
            spec.cpus,
            spec.preempt,
            roles.len(),
            None,
            cfg.seed,
        );
        let mut stats: Vec<ThreadStats> = roles.iter().map(|_| ThreadStats::default()).collect();
        let duration_ps = cfg.duration.as_nanos() as u64 * 1_000;
        let timers = Timers {
            window_ps: 0,
            on_window: Box::new(|_, _| {}),
            stop_ps: duration_ps,
            on_stop: Box::new(|| shared.stop.store(true, Relaxed)),
            cut_off_ps: 2 * duration_ps,
        };
        let ended = run::run(kernel, bodies, &mut stats, timers);
        let ends = ends
            .into_iter()
            .map(|e| e.into_inner().unwrap_or(Exit::Stuck))
            .collect();
        collect(&shared, cfg, roles, ends, cfg.duration, Some(ended))
    }
}
