//! `--preempt user`: the simulator's threads as user-space ones, which the
//! cross-check needs to stand beside the native engine. On one CPU shared by
//! three writers, a FIFO lock collapses once a preempted thread holds it or
//! owns the next ticket: every other thread spins out its slice (yielding
//! only after 1,024 polls) while the one that can go on waits for a CPU. A
//! test-and-set lock lets whoever runs take it, so it barely notices. Under
//! a kernel model the spinner and the holder are never preempted, and the
//! ticket lock runs as fast as the tas one. Neither is written into the
//! simulator: both come from the scheduler running the locks' own code.

mod common;

use rmap_storm::engine::sim::{Preempt, SimSpec};
use rmap_storm::locks::LockKind;
use rmap_storm::model::machine::{self, MachineProfile};
use rmap_storm::torture::{self, Config, Engine};
use std::time::Duration;

/// Acquisitions per virtual second of 3 writers on one CPU, holding 1 us
/// and thinking 1 us, for 100 virtual ms (several 8 ms slices each).
fn per_s(kind: LockKind, preempt: Preempt) -> f64 {
    let machine = machine::load(&MachineProfile::default_path()).expect("default profile");
    let out = torture::run(&Config {
        kind,
        threads: [0, 3, 0, 0],
        duration: Duration::from_millis(100),
        load: Duration::from_micros(1),
        interval: Duration::from_micros(1),
        sched: false,
        exponential: false,
        seed: 3,
        engine: Engine::Sim(Box::new(SimSpec {
            cpus: 1,
            preempt,
            machine,
        })),
    })
    .expect("a simulated torture run");
    out.threads.iter().map(|t| t.taken).sum::<u64>() as f64 / out.elapsed.as_secs_f64()
}

#[test]
fn a_preempted_ticket_holder_stalls_user_space_spinners_only() {
    let ratio = |p| per_s(LockKind::Spinlock, p) / per_s(LockKind::Tas, p);
    let (user, full) = (ratio(Preempt::User), ratio(Preempt::Full));
    assert!(
        user < 0.5,
        "user space: the ticket lock made {user:.2}x the tas lock's acquisitions; a preempted ticket should stall its spinners"
    );
    assert!(
        (0.8..1.25).contains(&full),
        "kernel (full preemption): the ticket lock made {full:.2}x the tas lock's; with no spinner or holder preempted they should match"
    );
}

/// A user-space spinner waiting on its own CPU for a preempted holder (here
/// of a sleeping lock's wait_lock) is switched out when its slice ends, so
/// the holder runs again: synchro on 2 CPUs (7 threads) ends on time, where
/// it once spun until the watchdog cut it off.
#[test]
fn a_spinner_behind_a_preempted_holder_gives_its_cpu_away() {
    let out = common::rmap_storm(
        "run",
        &[
            "models/synchro.toml",
            "--engine",
            "sim",
            "--cpus",
            "2",
            "--threads",
            "4",
            "--lock",
            "rwsem",
            "--preempt",
            "user",
            "--duration",
            "500ms",
        ],
    );
    let stdout = common::text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("watchdog"), "{stdout}");
}
