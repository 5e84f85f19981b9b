//! The sweep loop, its folder and shards, driven by a fake engine.

mod sweep_fake;

use indicatif::ProgressBar;
use proptest::prelude::*;
use rmap_storm::fileio::{self, results::read_sweep};
use rmap_storm::locks::LockKind;
use rmap_storm::report::csv;
use rmap_storm::results::{
    PointRun, RunReport, Shard, SweepParams, SweepPoint, SweepResults, XAxis,
};
use rmap_storm::sweep::{self, Runner};
use rmap_storm::{Error, Result};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

fn run_sweep(params: &SweepParams, out: &Path, runner: &dyn Runner) -> Result<sweep::SweepOutcome> {
    sweep::run(params, out, runner, &ProgressBar::hidden())
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every file in the folder is whole: JSON parses as its type, CSV as rows.
fn assert_all_whole(dir: &Path) -> usize {
    let all = files(dir);
    for path in &all {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(!name.starts_with('.'), "temp file left: {}", path.display());
        let text = std::fs::read_to_string(path).unwrap();
        match name.as_ref() {
            "sweep.json" => drop(serde_json::from_str::<SweepParams>(&text).unwrap()),
            "results.json" => drop(serde_json::from_str::<SweepResults>(&text).unwrap()),
            "results.csv" => drop(csv::from_reader(text.as_bytes()).unwrap()),
            _ => drop(serde_json::from_str::<PointRun>(&text).unwrap()),
        }
    }
    all.len()
}

#[test]
fn points_run_repeat_by_repeat_then_x_then_lock() {
    let points = sweep_fake::params().points();
    assert_eq!(points.len(), 18);
    let order: Vec<(u32, String, LockKind)> = points
        .iter()
        .take(4)
        .map(|p| (p.repeat, p.x.clone(), p.lock))
        .collect();
    assert_eq!(
        order,
        [
            (0, "1".into(), LockKind::Spinlock),
            (0, "1".into(), LockKind::Rwsem),
            (0, "2".into(), LockKind::Spinlock),
            (0, "2".into(), LockKind::Rwsem),
        ]
    );
    assert!(points.iter().enumerate().all(|(i, p)| p.index == i));
    // Repeat r runs with seed + r; threads come from the x axis.
    let last = points.last().unwrap();
    assert_eq!((last.repeat, last.seed, last.threads), (2, 9, Some(4)));
    assert_eq!(last.overrides, ["world.tasks=100"]);
}

#[test]
fn vary_adds_its_override_and_keeps_the_fixed_thread_count() {
    let params = SweepParams {
        x: XAxis::Vary {
            key: "world.tasks".into(),
            values: vec!["1000".into(), "5000".into()],
        },
        threads: Some(2),
        overrides: vec!["workload.monitor.read_critical=true".into()],
        ..sweep_fake::params()
    };
    params.validate().unwrap();
    let point = &params.points()[2];
    assert_eq!(
        (point.x_key.as_str(), point.x.as_str()),
        ("world.tasks", "5000")
    );
    assert_eq!(point.threads, Some(2));
    assert_eq!(
        point.overrides,
        ["workload.monitor.read_critical=true", "world.tasks=5000"]
    );
}

proptest! {
    /// The shards of a sweep partition its points: disjoint, and together all.
    #[test]
    fn shards_partition_the_points(locks in 1usize..=8, xs in 1u32..6, repeat in 1u32..4, count in 1u32..10) {
        let params = SweepParams {
            locks: LockKind::ALL[..locks].to_vec(),
            x: XAxis::Threads((1..=xs).collect()),
            repeat,
            ..sweep_fake::params()
        };
        let points = params.points();
        let all: BTreeSet<usize> = points.iter().map(|p| p.index).collect();
        prop_assert_eq!(all.len(), params.len());
        let mut union = BTreeSet::new();
        for index in 1..=count {
            let shard = SweepParams { shard: Some(Shard { index, count }), ..params.clone() };
            for point in shard.shard_points() {
                prop_assert!(union.insert(point.index), "point {} in two shards", point.index);
                prop_assert_eq!(&point, &points[point.index]);
            }
        }
        prop_assert_eq!(union, all);
    }
}

#[test]
fn a_sweep_writes_points_results_and_round_trips_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let params = sweep_fake::params();
    let outcome = run_sweep(&params, &out, &sweep_fake::report).unwrap();
    assert_eq!(
        (outcome.ran, outcome.resumed, outcome.results.runs.len()),
        (18, 0, 18)
    );
    // Every point file, sweep.json, results.json and results.csv.
    assert_eq!(assert_all_whole(&out), 18 + 3);

    // JSON: the folder, and results.json alone, read back as what was written.
    assert_eq!(read_sweep(&out).unwrap(), outcome.results);
    let results_json = out.join("results.json");
    assert_eq!(read_sweep(&results_json).unwrap(), outcome.results);
    // Each entry of results.json still reads as a plain run JSON.
    let value: serde_json::Value = fileio::read_json(&results_json).unwrap();
    let first: RunReport = serde_json::from_value(value["runs"][0].clone()).unwrap();
    assert_eq!(first, outcome.results.runs[0].report);

    // CSV: one row per run and role, read back equal to what was written.
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows = csv::from_reader(text.as_bytes()).unwrap();
    assert_eq!(rows, csv::rows(&outcome.results.runs));
    assert_eq!(rows.len(), 18 * 2);
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with("point,model,engine,lock,x_key,x,repeat,seed,"),
        "{header}"
    );
    let row = rows
        .iter()
        .find(|r| r.point == 5 && r.role == "reclaim")
        .unwrap();
    assert_eq!(
        (row.lock, row.x.as_str(), row.threads),
        (LockKind::Rwsem, "4", 4)
    );
    assert_eq!(
        (row.lock_class.as_str(), row.wait_share),
        ("anon_vma", Some(0.1))
    );
    let starved = rows.iter().find(|r| r.point == 4).unwrap();
    assert_eq!(starved.verdict, "starved fork-exit");
}

/// A runner that fails (or panics) once `limit` points have run.
struct Failing<'a> {
    limit: usize,
    panic: bool,
    done: &'a Cell<usize>,
}

impl Runner for Failing<'_> {
    fn run(&self, point: &SweepPoint) -> Result<RunReport> {
        if self.done.get() == self.limit {
            assert!(!self.panic, "engine crashed");
            return Err(Error::failed("engine lost"));
        }
        self.done.set(self.done.get() + 1);
        sweep_fake::report(point)
    }
}

#[test]
fn an_interrupted_sweep_keeps_whole_files_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let params = sweep_fake::params();
    let done = Cell::new(0);
    let failing = Failing {
        limit: 5,
        panic: false,
        done: &done,
    };
    let err = run_sweep(&params, &out, &failing).unwrap_err();
    assert_eq!(err.exit_code(), 1);
    assert!(
        err.to_string()
            .starts_with("point 5 (rwsem threads=4 #1): engine lost"),
        "{err}"
    );
    assert_eq!(assert_all_whole(&out), 5 + 3);
    assert_eq!(read_sweep(&out).unwrap().runs.len(), 5);

    // A panic mid-sweep (the process dying) leaves whole files too.
    let done = Cell::new(0);
    let crashing = Failing {
        limit: 3,
        panic: true,
        done: &done,
    };
    let crashed = dir.path().join("crashed");
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_sweep(&params, &crashed, &crashing)
    }));
    assert!(result.is_err());
    assert_eq!(assert_all_whole(&crashed), 3 + 3);

    // Running again finishes the rest and matches an uninterrupted sweep.
    let resumed = run_sweep(&params, &out, &sweep_fake::report).unwrap();
    assert_eq!((resumed.ran, resumed.resumed), (13, 5));
    let fresh = run_sweep(&params, &dir.path().join("fresh"), &sweep_fake::report).unwrap();
    assert_eq!(resumed.results, fresh.results);
    assert_eq!(read_sweep(&out).unwrap(), fresh.results);
    // A leftover temp file from a kill mid-write is removed on the next run.
    std::fs::write(out.join(".tmp-results.json"), "{\"trunc").unwrap();
    run_sweep(&params, &out, &sweep_fake::report).unwrap();
    assert_all_whole(&out);
}

#[test]
fn bad_output_folders_and_rejected_points_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let params = sweep_fake::params();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let err = run_sweep(&params, &file, &sweep_fake::report).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string().contains("exists and is not a folder"),
        "{err}"
    );

    let other = dir.path().join("other");
    run_sweep(&params, &other, &sweep_fake::report).unwrap();
    let before = files(&other);
    let changed = SweepParams {
        repeat: 2,
        ..params.clone()
    };
    let err = run_sweep(&changed, &other, &sweep_fake::report).unwrap_err();
    assert!(err.to_string().contains("holds a different sweep"), "{err}");
    assert_eq!(files(&other), before);

    let litter = dir.path().join("litter");
    std::fs::create_dir(&litter).unwrap();
    std::fs::write(litter.join("notes.txt"), "mine").unwrap();
    let err = run_sweep(&params, &litter, &sweep_fake::report).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");

    struct Rejecting;
    impl Runner for Rejecting {
        fn check(&self, point: &SweepPoint) -> Result<()> {
            match point.lock {
                LockKind::Rwsem => Err(Error::usage("model.toml: world.tasks: bad")),
                _ => Ok(()),
            }
        }
        fn run(&self, _: &SweepPoint) -> Result<RunReport> {
            unreachable!("a rejected sweep runs nothing")
        }
    }
    let rejected = dir.path().join("rejected");
    let err = run_sweep(&params, &rejected, &Rejecting).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(!rejected.exists());

    let invalid = SweepParams {
        locks: vec![],
        ..params
    };
    let err = run_sweep(&invalid, &rejected, &sweep_fake::report).unwrap_err();
    assert_eq!(
        (
            err.exit_code(),
            err.to_string().starts_with("--locks: empty")
        ),
        (2, true)
    );
    assert!(!rejected.exists());
}

#[test]
fn merged_shards_equal_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let params = sweep_fake::params();
    let whole = run_sweep(&params, &dir.path().join("whole"), &sweep_fake::report).unwrap();
    let mut shards = Vec::new();
    for index in 1..=2 {
        let shard = SweepParams {
            shard: Some(Shard { index, count: 2 }),
            ..params.clone()
        };
        let path = dir.path().join(format!("shard{index}"));
        let outcome = run_sweep(&shard, &path, &sweep_fake::report).unwrap();
        assert_eq!(outcome.ran, 9);
        shards.push(path);
    }
    let merged_dir = dir.path().join("merged");
    let merged = sweep::merge(&shards, &merged_dir).unwrap();
    assert_eq!(merged, whole.results);
    assert_eq!(read_sweep(&merged_dir).unwrap(), whole.results);
    assert_all_whole(&merged_dir);

    // One shard alone merges to half the points; merging again into the same
    // folder adds the other half.
    let partial = dir.path().join("partial");
    assert_eq!(sweep::merge(&shards[..1], &partial).unwrap().runs.len(), 9);
    assert_eq!(sweep::merge(&shards[1..], &partial).unwrap(), whole.results);

    // Folders of different sweeps do not merge.
    let other = SweepParams { seed: 99, ..params };
    let other_dir = dir.path().join("other");
    run_sweep(&other, &other_dir, &sweep_fake::report).unwrap();
    let err = sweep::merge(&[shards[0].clone(), other_dir], &dir.path().join("x")).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("not shards of one sweep"), "{err}");
    assert!(!dir.path().join("x").exists());
}

/// The fake engine as a runner whose points may run side by side, counting
/// how many ran at once. With `meet` on a pool of two or more threads, point
/// 0 waits (up to 5 s) for another point to start, and every other point for
/// point 0 to start, so whichever starts first, two must overlap.
#[derive(Default)]
struct Parallel {
    started: AtomicUsize,
    zero_started: AtomicBool,
    running: AtomicUsize,
    most: AtomicUsize,
    meet: bool,
    fail_at: Option<usize>,
}

impl Runner for Parallel {
    fn run(&self, point: &SweepPoint) -> Result<RunReport> {
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        self.started.fetch_add(1, SeqCst);
        let zero = point.index == 0;
        if zero {
            self.zero_started.store(true, SeqCst);
        }
        let company = || match zero {
            true => self.started.load(SeqCst) >= 2,
            false => self.zero_started.load(SeqCst),
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let meet = self.meet && rayon::current_num_threads() > 1;
        while meet && !company() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.running.fetch_sub(1, SeqCst);
        if self.fail_at == Some(point.index) {
            return Err(Error::failed("engine lost"));
        }
        sweep_fake::report(point)
    }

    fn parallel(&self) -> Option<&(dyn Runner + Sync)> {
        Some(self)
    }
}

/// `f` on a rayon pool of `threads` threads.
fn on_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn parallel_points_overlap_and_the_folder_does_not_depend_on_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let params = sweep_fake::params();
    let folder = |threads: usize| {
        let out = dir.path().join(format!("threads{threads}"));
        let runner = Parallel {
            meet: true,
            ..Parallel::default()
        };
        let outcome = on_pool(threads, || run_sweep(&params, &out, &runner)).unwrap();
        assert_eq!(outcome.ran, 18);
        (out, runner.most.load(SeqCst))
    };
    let (one, most_one) = folder(1);
    let (three, most_three) = folder(3);
    assert_eq!(most_one, 1, "one thread runs one point at a time");
    assert!(
        most_three >= 2,
        "three threads ran at most {most_three} point at once"
    );
    assert_eq!(assert_all_whole(&three), 18 + 3);
    for file in ["results.json", "results.csv", "sweep.json"] {
        let read = |d: &Path| std::fs::read(d.join(file)).unwrap();
        assert!(read(&one) == read(&three), "{file} differs");
    }
    let held = read_sweep(&three.join("results.json")).unwrap();
    let indices: Vec<usize> = held.runs.iter().map(|r| r.point.index).collect();
    assert_eq!(
        indices,
        (0..18).collect::<Vec<_>>(),
        "results.json in point order"
    );
}

#[test]
fn a_failed_parallel_point_keeps_whole_files_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let params = sweep_fake::params();
    let failing = Parallel {
        fail_at: Some(7),
        ..Parallel::default()
    };
    let err = on_pool(2, || run_sweep(&params, &out, &failing)).unwrap_err();
    assert_eq!(err.exit_code(), 1);
    assert!(err.to_string().starts_with("point 7 ("), "{err}");
    let kept = read_sweep(&out).unwrap().runs.len();
    assert!(kept < 18, "point 7 is not held");
    assert_eq!(assert_all_whole(&out), kept + 3);
    // results.json holds every point file's run.
    assert_eq!(
        read_sweep(&out.join("results.json")).unwrap(),
        read_sweep(&out).unwrap()
    );

    let resumed = on_pool(2, || run_sweep(&params, &out, &Parallel::default())).unwrap();
    assert_eq!((resumed.ran, resumed.resumed), (18 - kept, kept));
    let fresh = run_sweep(&params, &dir.path().join("fresh"), &sweep_fake::report).unwrap();
    assert_eq!(resumed.results, fresh.results);
}
