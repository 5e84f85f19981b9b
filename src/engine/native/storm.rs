//! One native run: start every worker at a barrier, sample progress once per
//! window, stop them on a flag after the duration, and give up waiting at
//! twice the duration (the watchdog) so a livelocked run still ends and says so.

use crate::engine::storm::ctx::Ctx;
use super::pin::{CpuList, pin_current_thread};
use super::recorder::{Recorder, Slot};
use crate::engine::storm::roles::spin_for;
use crate::engine::storm::roles::{Role, Worker};
use crate::locks::RawRwLock;
use crate::metrics::verdict::RunProgress;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The monitor's window: a tenth of the run, between 20 ms and 1 s.
pub fn window_for(duration: Duration) -> Duration {
    (duration / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
}

/// What a run leaves for the summary.
pub struct Outcome {
    pub slots: Arc<Vec<Slot>>,
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
    let plan = thread_plan(&ctx);
    let slots: Arc<Vec<Slot>> = Arc::new(
        plan.iter()
            .map(|&(role, _, _)| Slot::new(role as usize))
            .collect(),
    );
    let barrier = Arc::new(Barrier::new(plan.len() + 1));
    for (i, &(role, nth, of)) in plan.iter().enumerate() {
        let (ctx, slots, barrier) = (ctx.clone(), slots.clone(), barrier.clone());
        let cpu = pin.map(|p| p.cpu_for(i));
        let page_cap = ctx.world.page_capacity();
        std::thread::Builder::new()
            .name(format!("{}-{nth}", role.name()))
            .spawn(move || {
                if let Some(cpu) = cpu {
                    // Validated against the online CPUs before the run.
                    let _ = pin_current_thread(cpu);
                }
                let rng = Xoshiro256PlusPlus::seed_from_u64(
                    seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                let lru_hand = ((u64::from(page_cap) * nth as u64) / of.max(1) as u64) as u32;
                barrier.wait();
                let rec = Recorder::new(&slots[i]);
                let mut w = Worker {
                    role,
                    nth,
                    rng,
                    rec,
                    lru_hand,
                };
                work(&ctx, &mut w);
                w.rec.finish();
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
        slots,
        progress,
        elapsed: stopped - start,
    }
}

/// (role, nth thread of the role, threads in the role) for every worker.
fn thread_plan<L: RawRwLock>(ctx: &Ctx<L>) -> Vec<(Role, usize, usize)> {
    Role::ALL
        .iter()
        .flat_map(|&role| {
            let n = ctx.workload.role(role.name()).threads as usize;
            (0..n).map(move |i| (role, i, n))
        })
        .collect()
}

/// The worker loop: operate, time, think, until the stop flag.
fn work<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker<'_>) {
    let think_ns = w.spec(ctx).think_us * 1_000;
    while !ctx.stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        w.role.op(ctx, w);
        w.rec.op_done(t0, Instant::now());
        spin_for(think_ns);
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
            cores: super::pin::online_cpus() as f64,
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
            per_role[s.role] += ops - self.last_ops[i];
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
