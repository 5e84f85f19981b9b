//! One native run: start every worker at a barrier, sample progress once per
//! window, stop them on a flag after the duration, and give up waiting at
//! twice the duration (the watchdog) so a livelocked run still ends and says so.

use super::pin::pin_current_thread;
use super::recorder::{Recorder, Slot};
use crate::engine::cpus::{CpuList, online_cpus};
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::roles;
use crate::engine::storm::window_for;
use crate::engine::storm::worker::{self, Worker};
use crate::locks::RawRwLock;
use crate::locks::platform::{Native, Platform};
use crate::metrics::record::OpOutcome;
use crate::metrics::summary::ThreadRecord;
use crate::metrics::verdict::RunProgress;
use crate::model::Role;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// What a run leaves for the summary.
pub struct Outcome {
    /// Every worker's record, in plan order.
    pub threads: Vec<ThreadRecord>,
    pub progress: RunProgress,
    pub elapsed: Duration,
}

/// Run every role's threads over `ctx` for `duration`.
pub fn run<L: RawRwLock>(
    ctx: Arc<Ctx<L>>,
    duration: Duration,
    pin: Option<&CpuList>,
    seed: u64,
) -> Outcome {
    let plan = worker::plan(&ctx.workload);
    let slots: Arc<Vec<Slot>> = Arc::new(
        plan.iter()
            .enumerate()
            .map(|(i, p)| Slot::new(p.role, i as u32))
            .collect(),
    );
    let barrier = Arc::new(Barrier::new(plan.len() + 1));
    for (i, &place) in plan.iter().enumerate() {
        let (ctx, slots, barrier) = (ctx.clone(), slots.clone(), barrier.clone());
        let cpu = pin.map(|p| p.cpu_for(i));
        std::thread::Builder::new()
            .name(format!("{}-{}", place.role, place.nth))
            .spawn(move || {
                if let Some(cpu) = cpu {
                    // Validated against the online CPUs before the run.
                    let _ = pin_current_thread(cpu);
                }
                let mut w = Worker::new(place, i, seed, ctx.world.page_capacity());
                let think_ns = w.spec(&ctx).think_us * 1_000;
                barrier.wait();
                let mut rec = Recorder::new(&slots[i]);
                let (role, ctx): (_, &Ctx<L>) = (place.role, &ctx);
                work(&ctx.stop, think_ns, &mut w, &mut rec, |w| {
                    roles::op(role, ctx, w)
                });
                rec.finish(&mut w.local);
            })
            .expect("spawning a worker thread");
    }
    barrier.wait();
    let start = Instant::now();
    let window = window_for(duration);
    let mut progress = RunProgress {
        window_ns: window.as_nanos() as u64,
        ..RunProgress::default()
    };
    let mut sampler = Sampler::new(&slots);
    while start.elapsed() < duration {
        let left = duration.saturating_sub(start.elapsed());
        std::thread::sleep(window.min(left));
        sampler.sample(&slots, &mut progress);
    }
    ctx.stop.store(true, Ordering::Relaxed);
    let stopped = Instant::now();
    let deadline = start + 2 * duration;
    while !slots.iter().all(|s| s.finished.load(Ordering::Acquire)) {
        if Instant::now() >= deadline.max(stopped + Duration::from_millis(200)) {
            progress.watchdog_fired = true;
            sampler.sample(&slots, &mut progress);
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Outcome {
        threads: slots.iter().map(Slot::take).collect(),
        progress,
        elapsed: stopped - start,
    }
}

/// The worker loop: operate, time, record, think, until `stop`.
fn work(
    stop: &AtomicBool,
    think_ns: u64,
    w: &mut Worker,
    rec: &mut Recorder<'_>,
    mut op: impl FnMut(&mut Worker) -> OpOutcome,
) {
    while !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        let outcome = op(w);
        rec.ended(&mut w.local, outcome, t0, Instant::now());
        Native::user_work(think_ns);
    }
}

/// Per-window sampling of role progress and process CPU time.
struct Sampler {
    last_ops: Vec<u64>,
    last_cpu_ns: u64,
    last_at: Instant,
    cores: f64,
}

impl Sampler {
    fn new(slots: &[Slot]) -> Sampler {
        Sampler {
            last_ops: vec![0; slots.len()],
            last_cpu_ns: process_cpu_ns(),
            last_at: Instant::now(),
            cores: online_cpus() as f64,
        }
    }

    fn sample(&mut self, slots: &[Slot], progress: &mut RunProgress) {
        let now = Instant::now();
        let cpu = process_cpu_ns();
        let wall = now.duration_since(self.last_at).as_nanos().max(1) as f64;
        progress
            .cpu_busy
            .push(((cpu - self.last_cpu_ns) as f64 / (wall * self.cores)).min(1.0));
        self.last_cpu_ns = cpu;
        self.last_at = now;
        let mut per_role = [0u64; Role::ALL.len()];
        for (i, s) in slots.iter().enumerate() {
            let ops = s.ops.load(Ordering::Relaxed);
            per_role[s.role as usize] += ops - self.last_ops[i];
            self.last_ops[i] = ops;
        }
        progress
            .roles
            .resize_with(Role::ALL.len(), Default::default);
        for (r, n) in per_role.iter().enumerate() {
            progress.roles[r].ops_per_window.push(*n);
        }
    }
}

/// User + system CPU time of the whole process, ns.
fn process_cpu_ns() -> u64 {
    // SAFETY: getrusage only writes the struct handed to it; all-zero is a
    // valid rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer cannot fail.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::storm::worker::Place;

    /// The real worker loop and recorder around an op stubbed to fail: the
    /// slot's done counter (what the monitor samples) stays at zero, the
    /// failures are counted, and no failure becomes a latency sample.
    #[test]
    fn a_worker_whose_every_op_fails_records_no_operation() {
        let slot = Slot::new(Role::Touch, 0);
        let stop = AtomicBool::new(false);
        let place = Place {
            role: Role::Touch,
            nth: 0,
            of: 1,
        };
        let mut w = Worker::new(place, 0, 1, 16);
        let mut rec = Recorder::new(&slot);
        let mut calls = 0u64;
        work(&stop, 0, &mut w, &mut rec, |_| {
            calls += 1;
            if calls == 5_000 {
                stop.store(true, Ordering::Relaxed);
            }
            OpOutcome::Failed
        });
        rec.finish(&mut w.local);
        let t = slot.take();
        assert_eq!((t.ops, t.record.failed, t.record.gave_up), (0, 5_000, 0));
        assert_eq!(
            t.record.latency_ns.len(),
            0,
            "failures are no latency samples"
        );
        assert!(slot.finished.load(Ordering::Acquire));
    }

    #[test]
    fn done_ops_move_the_slot_counter_and_give_up_is_kept_apart() {
        let slot = Slot::new(Role::Reclaim, 0);
        let stop = AtomicBool::new(false);
        let place = Place {
            role: Role::Reclaim,
            nth: 0,
            of: 1,
        };
        let mut w = Worker::new(place, 0, 1, 16);
        let mut rec = Recorder::new(&slot);
        let mut calls = 0u64;
        work(&stop, 0, &mut w, &mut rec, |_| {
            calls += 1;
            if calls == 300 {
                stop.store(true, Ordering::Relaxed);
            }
            if calls.is_multiple_of(3) {
                OpOutcome::GaveUp
            } else {
                OpOutcome::Done
            }
        });
        rec.finish(&mut w.local);
        let t = slot.take();
        assert_eq!((t.ops, t.record.gave_up, t.record.failed), (200, 100, 0));
        assert_eq!(t.record.latency_ns.len(), 200);
    }
}
