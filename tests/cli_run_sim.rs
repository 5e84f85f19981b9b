//! `rmap-storm run --engine sim` on the real binary: every shipped model runs
//! on virtual CPUs and reports in virtual time, a run is the same for the
//! same seed, the preemption model changes what the kernel's would, and bad
//! simulator input is one line and exit 2 with nothing written.

mod common;

use common::text;
use rmap_storm::results::RunReport;
use std::path::Path;
use std::process::Output;

fn run(args: &[&str]) -> Output {
    common::rmap_storm("run", args)
}

/// The run's JSON as written, and as parsed.
fn run_json(args: &[&str]) -> (serde_json::Value, RunReport) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut all = vec!["--engine", "sim"];
    all.extend(args);
    all.extend(["--json", json.to_str().unwrap()]);
    let out = run(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let bytes = std::fs::read(&json).unwrap();
    (
        serde_json::from_slice(&bytes).unwrap(),
        serde_json::from_slice(&bytes).unwrap(),
    )
}

/// The JSON without the fields that are this host's.
fn without_wall_clock(mut v: serde_json::Value) -> serde_json::Value {
    common::strip_wall_clock(&mut v);
    v
}

#[test]
fn every_shipped_model_runs_on_four_virtual_cpus() {
    let models = common::shipped_models();
    for model in models {
        let m = model.to_str().unwrap();
        let (_, r) = run_json(&[m, "--cpus", "4", "--duration", "5ms"]);
        assert_eq!(r.engine, "sim", "{m}");
        assert_eq!(r.duration_s, 0.005, "{m}: virtual seconds, exactly");
        let sim = r.sim.as_ref().expect("the simulator's figures");
        assert_eq!(sim.cpus, 4, "{m}");
        assert!(sim.events > 0, "{m}: {sim:?}");
        assert!(
            r.roles.values().map(|role| role.ops).sum::<u64>() > 0,
            "{m}: nothing ran in 5 virtual ms"
        );
    }
}

/// Five runnable threads keep two virtual CPUs busy: the virtual CPU time
/// their roles ran over the run's span adds up to the two CPUs, and no role
/// is left out.
#[test]
fn the_roles_use_the_virtual_cpus_between_them() {
    let (_, r) = run_json(&["--cpus", "2", "--duration", "200ms", "--lock", "rwsem"]);
    let used: f64 = r.roles.values().map(|role| role.cpus_used).sum();
    assert!(
        (1.8..=2.02).contains(&used),
        "{used:.3} CPUs used on 2: {:?}",
        r.roles
    );
    assert!(
        r.roles.values().all(|role| role.cpus_used > 0.0),
        "{:?}",
        r.roles
    );
}

#[test]
fn the_same_seed_gives_the_same_json_apart_from_wall_clock_fields() {
    let args = ["--cpus", "8", "--duration", "3ms", "--seed", "7"];
    let (a, _) = run_json(&args);
    let (b, _) = run_json(&args);
    assert_eq!(without_wall_clock(a.clone()), without_wall_clock(b));
    let (c, _) = run_json(&["--cpus", "8", "--duration", "3ms", "--seed", "8"]);
    assert_ne!(
        without_wall_clock(a),
        without_wall_clock(c),
        "another seed is another run"
    );
}

/// models/machines/default.toml with `key` (a key of its own line) set to
/// `value`, written into `dir`.
fn default_profile_with(dir: &Path, key: &str, value: f64) -> std::path::PathBuf {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/machines/default.toml"),
    )
    .unwrap();
    let edited: Vec<String> = src
        .lines()
        .map(|l| {
            if l.starts_with(&format!("{key} =")) {
                format!("{key} = {value:.1}")
            } else {
                l.to_string()
            }
        })
        .collect();
    let path = dir.join(format!("{key}.toml"));
    std::fs::write(&path, edited.join("\n")).unwrap();
    path
}

/// A page_referenced walk pays the profile's `work.walk_ns` once, before
/// its first vma: one reclaimer on one CPU, alone in a small world, takes
/// its median operation (a walk of a few vmas) 10 us longer with a 10 us
/// walk start, not 0 (the start not charged) nor one 10 us per vma.
#[test]
fn a_walk_pays_its_start_once_whatever_its_vmas() {
    let dir = tempfile::tempdir().unwrap();
    let slow = default_profile_with(dir.path(), "walk_ns", 10_000.0);
    let reclaim = |machine: &str| {
        let args = [
            "models/aim7-fork-test.toml",
            "--cpus",
            "1",
            "--set",
            "workload.scale=\"reclaim\"",
            "--threads",
            "1",
            "--set",
            "workload.fork_exit.threads=0",
            "--duration",
            "20ms",
            "--machine",
            machine,
        ];
        let (_, r) = run_json(&args);
        let m = &r.roles["reclaim"];
        (m.latency_ns.p50, m.vmas_per_op)
    };
    let (p50, vmas) = reclaim("models/machines/default.toml");
    let (slow_p50, _) = reclaim(slow.to_str().unwrap());
    let grew = slow_p50 as f64 - p50 as f64;
    assert!(
        vmas > 1.5,
        "the walks visited {vmas:.2} vmas an operation: too few to tell once from per vma"
    );
    assert!(
        (9_000.0..11_000.0).contains(&grew),
        "a 10 us walk start (default {}) made the median operation {grew} ns longer, not 10,000",
        p50
    );
}

/// The worker loop times each operation with two clock reads, which the
/// simulator charges at the profile's `work.clock_ns`: one synchro monitor
/// on one CPU (read(2), 2 us of formatting under the lock, 2 us of
/// thinking: about 4.2 us a cycle) does a third fewer reads at 1 us a clock
/// read, and the operation's own latency holds one of them.
#[test]
fn the_worker_loops_clock_reads_cost_the_profiles_clock_ns() {
    let dir = tempfile::tempdir().unwrap();
    let slow = default_profile_with(dir.path(), "clock_ns", 1000.0);
    let monitor = |machine: &str| {
        let args = [
            "models/synchro.toml",
            "--cpus",
            "1",
            "--threads",
            "1",
            "--set",
            "workload.mprotect.threads=0",
            "--set",
            "workload.munmap.threads=0",
            "--duration",
            "20ms",
            "--machine",
            machine,
        ];
        let (_, r) = run_json(&args);
        let m = &r.roles["monitor"];
        (m.ops as f64, m.latency_ns.p50)
    };
    let (ops, p50) = monitor("models/machines/default.toml");
    let (slow_ops, slow_p50) = monitor(slow.to_str().unwrap());
    let ratio = slow_ops / ops;
    assert!(
        (0.6..0.75).contains(&ratio),
        "2 us more a cycle gave {ratio:.2}x the reads ({slow_ops} vs {ops}), not about 0.68x"
    );
    // Of an operation's two stamps, the first's cost falls inside it and the
    // second's outside (natively each stamp lies inside its read, so about
    // one read's cost in all): the latency grows by one read, 1 us.
    let grew = slow_p50 as f64 - p50 as f64;
    assert!(
        (900.0..1100.0).contains(&grew),
        "a 1 us clock read made the median operation {grew} ns longer, not one read's 1000 ns"
    );
}

/// Seed 000: 32 threads of touch / mmap(MAP_FIXED) / mprotect on one CPU
/// with the 2007 rw_semaphore. Under PREEMPT_VOLUNTARY a writer switched out
/// at a might_sleep() inside its hold makes the others queue, and the FIFO
/// handoff keeps them switching on every acquisition; under PREEMPT_NONE a
/// task switches only at a return to user, never holding the lock.
#[test]
fn voluntary_preemption_storms_where_none_does_not() {
    let ctx = |preempt: &str| {
        let (_, r) = run_json(&[
            "models/mmap-mprotect.toml",
            "--cpus",
            "1",
            "--lock",
            "rwsem-fifo",
            "--preempt",
            preempt,
            "--duration",
            "1s",
        ]);
        assert_eq!(r.sim.as_ref().unwrap().preempt, preempt);
        r.ctx_switches.voluntary_per_s + r.ctx_switches.involuntary_per_s
    };
    let (none, voluntary) = (ctx("none"), ctx("voluntary"));
    assert!(
        voluntary >= 100.0 * none.max(1.0),
        "voluntary {voluntary:.0}/s vs none {none:.0}/s: want >= 100x"
    );
}

/// `--sched-trace` writes one sched_switch line per switch the run counted
/// and a sched_wakeup line per wake-up: every line parses as its
/// tracepoint prints it, the lines are in time order as ftrace merges its
/// CPUs' buffers (a wake-up of an idle CPU is recorded when sent and its
/// switch printed where it lands), every switch out of an idle CPU is to a
/// thread woken before it, and the lines of a worker leaving its CPU (not
/// by exiting) add up to the report's voluntary and involuntary switches
/// (the report counts them per thread, the trace per CPU: two ledgers of
/// one schedule).
#[test]
fn the_sched_trace_is_the_runs_switches_as_ftrace_prints_them() {
    // The ticket lock: preempted holders make a yield storm. The percpu
    // rwsem: waiters sleep, and idle CPUs are woken.
    let spin = sched_trace_of("spinlock");
    assert!(spin.lines > 1_000, "a yield storm: {} lines", spin.lines);
    let sleeping = sched_trace_of("percpu-rwsem");
    assert!(
        sleeping.idle_wakes > 10,
        "idle wakes: {}",
        sleeping.idle_wakes
    );
}

/// What [`sched_trace_of`] read in a trace.
struct TraceSeen {
    lines: u64,
    /// Lines of an idle CPU switching to a worker.
    idle_wakes: u64,
}

/// Run synchro at 2 CPUs with `lock` and check its trace against its
/// report (see the test above).
fn sched_trace_of(lock: &str) -> TraceSeen {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("sched.txt");
    let (_, r) = run_json(&[
        "models/synchro.toml",
        "--cpus",
        "2",
        "--threads",
        "2",
        "--pin",
        "0-1",
        "--preempt",
        "user",
        "--lock",
        lock,
        "--duration",
        "20ms",
        "--sched-trace",
        trace.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut last = 0.0f64;
    let mut seen = TraceSeen {
        lines: 0,
        idle_wakes: 0,
    };
    let mut from_workers = 0u64;
    // Threads woken and not yet switched to.
    let mut woken = std::collections::BTreeSet::new();
    let known = ["monitor-", "mprotect-", "munmap-"];
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        seen.lines += 1;
        let (head, event) = line
            .split_once(": sched_switch: ")
            .or_else(|| line.split_once(": sched_wakeup: "))
            .expect(line);
        let fields: Vec<&str> = head.split_whitespace().collect();
        let cpu: usize = fields[1].trim_matches(['[', ']']).parse().expect(line);
        let at: f64 = fields[3].parse().expect(line);
        assert!(cpu < 2, "{line}");
        assert!(at >= last, "{lock}: the trace went back in time: {line}");
        last = at;
        if line.contains(": sched_wakeup: ") {
            let comm = event.split_whitespace().next().unwrap();
            assert!(known.iter().any(|k| comm.contains(k)), "{line}");
            assert!(
                event.ends_with(" target_cpu=000") || event.ends_with(" target_cpu=001"),
                "{line}"
            );
            woken.insert(comm.trim_start_matches("comm=").to_string());
            continue;
        }
        let prev = event.split_whitespace().next().unwrap();
        let (_, next) = event.split_once(" ==> next_comm=").expect(line);
        let next = next.split_whitespace().next().unwrap();
        let was_woken = woken.remove(next);
        if prev.starts_with("prev_comm=swapper/") {
            assert!(
                was_woken,
                "{lock}: an idle CPU switched to a thread nobody woke: {line}"
            );
            seen.idle_wakes += 1;
        } else if !event.contains("prev_state=X") {
            // A worker's exit switches too, after its counters were read.
            from_workers += 1;
            assert!(known.iter().any(|k| prev.contains(k)), "{line}");
        }
    }
    let counted =
        (r.ctx_switches.voluntary_per_s + r.ctx_switches.involuntary_per_s) * r.duration_s;
    assert!(
        (from_workers as f64 - counted).abs() < 0.5,
        "{lock}: trace {from_workers} switches, report {counted}"
    );
    seen
}

#[test]
fn bad_simulator_input_is_one_line_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let profile = |name: &str, edit: &dyn Fn(String) -> String| {
        let src = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models/machines/default.toml"),
        )
        .unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, edit(src)).unwrap();
        path.to_str().unwrap().to_string()
    };
    let set_cost = |value: &'static str| {
        move |src: String| {
            src.lines()
                .map(|l| {
                    if l.starts_with("fault_ns") {
                        format!("fault_ns = {value}")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    let missing = profile("missing.toml", &|src| {
        src.lines()
            .filter(|l| !l.starts_with("fault_ns"))
            .collect::<Vec<_>>()
            .join("\n")
    });
    let negative = profile("negative.toml", &set_cost("-5.0"));
    let infinite = profile("infinite.toml", &set_cost("inf"));
    let nan = profile("nan.toml", &set_cost("nan"));
    let json = dir.path().join("out.json");
    let j = json.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--engine", "sim", "--cpus", "0"],
            "--cpus: 0 is out of range (allowed: 1..=4096)".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "4097"],
            "--cpus: 4097 is out of range (allowed: 1..=4096)".into(),
        ),
        (vec!["--cpus", "4"], "--cpus: only with --engine sim".into()),
        (
            vec!["--engine", "sim", "--preempt", "lazy"],
            "invalid value 'lazy' for '--preempt".into(),
        ),
        (
            vec!["--engine", "sim", "--cpus", "2", "--pin", "0-2"],
            "--pin: CPU 2 does not exist (allowed: 0-1)".into(),
        ),
        (
            vec!["--engine", "sim", "--machine", &missing],
            format!("{missing}: work.fault_ns: missing field `fault_ns`"),
        ),
        (
            vec!["--engine", "sim", "--machine", &negative],
            format!("{negative}: work.fault_ns: -5 is negative"),
        ),
        (
            vec!["--engine", "sim", "--machine", &infinite],
            format!("{infinite}: work.fault_ns: inf is not finite"),
        ),
        (
            vec!["--engine", "sim", "--machine", &nan],
            format!("{nan}: work.fault_ns: NaN is not finite"),
        ),
    ];
    for (args, want) in &cases {
        let mut all = args.clone();
        all.extend(["--duration", "1ms", "--json", j]);
        let out = run(&all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(want.as_str()),
            "{args:?}: want {want:?}, got {err}"
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!json.exists(), "{args:?}: wrote {j}");
    }
}
