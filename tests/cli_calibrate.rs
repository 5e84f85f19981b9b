//! `rmap-storm calibrate` on the real binary, with a short trial count: the
//! profile it writes loads with `machine::load` and says which keys it
//! measured, and bad input is one line, exit 2, with nothing written. No
//! test here looks at what the figures are, only that they are there.

use rmap_storm::model::machine;
use std::path::Path;
use std::process::{Command, Output};

fn calibrate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
        .arg("calibrate")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run rmap-storm")
}

/// The quick flags: one short trial, a 101-task AIM7 world.
const QUICK: [&str; 5] = ["--quick", "--trials", "1", "--set", "world.tasks=101"];

fn run_quick(out: &Path, extra: &[&str]) -> Output {
    let out = out.to_str().unwrap();
    let mut args = vec!["--out", out];
    args.extend(QUICK);
    args.extend(extra);
    calibrate(&args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A usage failure: exit 2 and exactly one line on stderr, which contains `want`.
fn assert_usage(out: &Output, want: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(want), "want {want:?} in: {err}");
}

#[test]
fn writes_a_profile_that_loads_and_names_what_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.toml");
    // The storm on the first CPU alone, as a one-CPU run pins it.
    let out = run_quick(&path, &["--storm-cpus", "1"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let profile = machine::load(&path).expect("the written profile loads");
    // The topology is this machine's CPUs as one die.
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(profile.topology.cpus(), cpus);
    assert_eq!(
        (profile.topology.sockets, profile.topology.dies_per_socket),
        (1, 1)
    );
    // Every figure is printed with its unit; the file says which keys were
    // measured and which copied.
    for name in [
        "atomic_rmw",
        "pause",
        "syscall",
        "handoff_1cpu",
        "walk_per_vma",
        "touch",
    ] {
        let line = stdout.lines().find(|l| l.starts_with(name));
        assert!(
            line.is_some_and(|l| l.contains(" ns")),
            "{name} in:\n{stdout}"
        );
    }
    // The walk is timed in the model's storm, on the walks of at least half
    // the 101 vmas a page of the ancestor's maps.
    assert!(
        stdout.contains("walks of >= 51 vmas in the model's native storm"),
        "{stdout}"
    );
    // The touch is the storm's mean touch of a mapped page.
    assert!(
        stdout.contains("the touch role's mean touch of a mapped page in the walks' native storm"),
        "{stdout}"
    );
    // The fork prices scale with the storm's forks and exits (its fork-exit
    // thread), the loop's figure printed beside it.
    let forks = stdout.lines().find(|l| l.starts_with("storm_fork"));
    assert!(
        forks.is_some_and(|l| !l.contains("forked none") && l.contains("-> work.vma_ns")),
        "{stdout}"
    );
    let file = std::fs::read_to_string(&path).unwrap();
    let line = |key: &str| {
        file.lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} in:\n{file}"))
            .to_string()
    };
    for key in [
        "atomic_ns",
        "pause_ns",
        "ctx_switch_ns",
        "syscall_ns",
        "vma_visit_ns",
        "touch_ns",
    ] {
        assert!(
            line(key).contains("# measured: median of 1 trials"),
            "{}",
            line(key)
        );
    }
    assert!(
        line("avc_ns").contains("fork and exit in the model's native storm"),
        "{}",
        line("avc_ns")
    );
    // --storm-cpus 1: the storm that timed the visit ran on one CPU.
    let pinned = line("vma_visit_ns");
    let pinned = pinned.split("a trial pinned to CPU ").nth(1).unwrap_or("");
    assert!(
        !pinned.is_empty() && pinned.chars().all(|c| c.is_ascii_digit()),
        "one CPU: {}",
        line("vma_visit_ns")
    );
    for key in ["memory_ns", "tick_ns", "fault_ns", "line_service"] {
        assert!(
            line(key).contains("# copied from models/machines/default.toml"),
            "{}",
            line(key)
        );
    }
    if cpus >= 2 {
        assert!(
            line("die_ns").contains("# measured: "),
            "{}",
            line("die_ns")
        );
        assert!(
            line("wakeup_idle_ns").contains("# measured: "),
            "{}",
            line("wakeup_idle_ns")
        );
    }
    // Nothing but the profile was left in the folder (no temp file).
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("local.toml")]);
}

#[test]
fn an_out_that_cannot_be_written_is_exit_2_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    // A folder that does not exist.
    let missing = dir.path().join("no/such/dir/local.toml");
    assert_usage(&run_quick(&missing, &[]), "cannot be written");
    assert!(!dir.path().join("no").exists());
    // A folder in place of the file.
    assert_usage(&run_quick(dir.path(), &[]), "is a folder");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn bad_options_and_bad_base_profiles_are_exit_2_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.toml");
    let trials = calibrate(&["--out", path.to_str().unwrap(), "--quick", "--trials", "0"]);
    assert_usage(&trials, "--trials: 0 is out of range (allowed: 1..=1000)");
    // A base profile with a negative cost names the file and key.
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/machines/default.toml"),
    )
    .unwrap();
    let bad = dir.path().join("bad.toml");
    let edited: String = base
        .lines()
        .map(|l| {
            if l.starts_with("memory_ns = ") {
                "memory_ns = -80.8"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&bad, edited).unwrap();
    let out = run_quick(&path, &["--base", bad.to_str().unwrap()]);
    assert_usage(
        &out,
        "bad.toml: cache.memory_ns: -80.8 is negative (allowed: 0..=1e12 ns)",
    );
    assert_usage(
        &run_quick(&path, &["--set", "world.tasks=0"]),
        "world.tasks",
    );
    assert_usage(
        &run_quick(&path, &["--storm-cpus", "0"]),
        "calibrate: a storm on 0 CPUs, but this process may use CPU ",
    );
    assert_usage(
        &run_quick(&path, &["--storm-cpus", "4097"]),
        "(allowed: 1..=",
    );
    assert_usage(
        &run_quick(&path, &["--set", "workload.touch.threads=0"]),
        "no touch thread to time (allowed: workload.touch.threads >= 1)",
    );
    assert!(!path.exists(), "nothing written");
}

#[test]
fn help_names_every_option() {
    let out = calibrate(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for opt in [
        "--out",
        "--trials",
        "--quick",
        "--model",
        "--set",
        "--base",
        "--storm-cpus",
    ] {
        assert!(help.contains(opt), "{opt} in:\n{help}");
    }
}
