//! `compare` on fixed inputs: statistics, marks, order and the table.

mod sweep_fake;

use indicatif::ProgressBar;
use rmap_storm::locks::LockKind;
use rmap_storm::report::compare::{self, GroupKey, Groups, Metrics};
use rmap_storm::sweep;

fn key(lock: LockKind, x: u32) -> GroupKey {
    GroupKey {
        lock,
        x_key: "threads".into(),
        x: x.to_string(),
    }
}

/// One group, one metric `m`, these samples.
fn groups(samples: &[f64]) -> Groups {
    let runs = samples
        .iter()
        .map(|&v| Metrics::from([("m".to_string(), v)]));
    Groups::from([(key(LockKind::Rwsem, 4), runs.collect())])
}

fn only_row(base: &[f64], new: &[f64]) -> compare::Row {
    let result = compare::compare(&groups(base), &groups(new));
    assert_eq!(result.rows.len(), 1);
    result.rows[0].clone()
}

#[test]
fn a_change_is_marked_only_with_three_samples_a_side_and_disjoint_ranges() {
    let row = only_row(&[100.0, 101.0, 102.0], &[110.0, 111.0, 112.0]);
    assert!((row.change_pct - 1000.0 / 101.0).abs() < 1e-12);
    assert!(row.changed && row.significant);

    // Two samples a side: no LKP mark, however clear; Welch still stars it
    // (t = 10 / 0.707 = 14.1 > t_975(2) = 4.303).
    let row = only_row(&[100.0, 101.0], &[110.0, 111.0]);
    assert!(!row.changed && row.significant);

    // Three a side, overlapping ranges: no mark; t = 1.5, not significant either.
    let row = only_row(&[100.0, 105.0, 110.0], &[108.0, 112.0, 116.0]);
    assert!(!row.changed && !row.significant);

    // One sample a side (two run files): a change, never a mark.
    let row = only_row(&[100.0], &[200.0]);
    assert_eq!(row.change_pct, 100.0);
    assert!(!row.changed && !row.significant);
}

#[test]
fn the_table_has_lkp_columns_and_marks() {
    let result = compare::compare(
        &groups(&[100.0, 101.0, 102.0]),
        &groups(&[110.0, 111.0, 112.0]),
    );
    let table = compare::render(&result);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "base  ±stddev%  %change      new  ±stddev%  metric"
    );
    assert_eq!(lines[1], " 101       ±1%    +9.9%  !*  111       ±1%  m");
    assert!(lines[2].starts_with("! changed: >= 3 samples a side"));
    assert_eq!(lines.len(), 3);
}

fn sweep_folder(dir: &std::path::Path, seed: u64) -> std::path::PathBuf {
    sweep_folder_of(
        dir,
        rmap_storm::results::SweepParams {
            seed,
            ..sweep_fake::params()
        },
    )
}

fn sweep_folder_of(
    dir: &std::path::Path,
    params: rmap_storm::results::SweepParams,
) -> std::path::PathBuf {
    let out = dir.join(format!(
        "seed{}-x{}",
        params.seed,
        params.x.labels().join("-")
    ));
    let runner = sweep_fake::report;
    sweep::run(&params, &out, &runner, &ProgressBar::hidden()).unwrap();
    out
}

#[test]
fn a_sweep_against_itself_is_all_zero_and_unmarked() {
    let dir = tempfile::tempdir().unwrap();
    let folder = sweep_folder(dir.path(), 7);
    let groups = compare::load(&folder).unwrap();
    // 2 locks x 3 thread counts, 3 repeats each.
    assert_eq!(groups.len(), 6);
    assert!(groups.values().all(|samples| samples.len() == 3));
    let result = compare::compare(
        &groups,
        &compare::load(&folder.join("results.json")).unwrap(),
    );
    assert!(!result.rows.is_empty());
    assert!(result.only_base.is_empty() && result.only_new.is_empty());
    for row in &result.rows {
        assert_eq!(row.change_pct, 0.0, "{}", row.metric);
        assert!(!row.changed && !row.significant, "{}", row.metric);
    }
    let table = compare::render(&result);
    for line in table.lines().skip(1).take(result.rows.len()) {
        assert!(
            line.contains(" 0.0% ") && !line.contains('!') && !line.contains('*'),
            "{line}"
        );
    }
    // Rows by group (lock order, then x), then metric name; parameters left out.
    let names: Vec<&str> = result.rows.iter().map(|r| r.metric.as_str()).collect();
    assert_eq!(
        names[0],
        "spinlock/threads=1/ctx_switches.involuntary_per_s"
    );
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with("seed") && !n.ends_with("threads"))
    );
    assert!(names.contains(&"rwsem/threads=4/lock_stats.anon_vma.events.sleep"));
    let mut groups: Vec<&str> = names.iter().map(|n| &n[..n.rfind('/').unwrap()]).collect();
    groups.dedup();
    let expected =
        ["spinlock", "rwsem"].map(|lock| [1, 2, 4].map(|x| format!("{lock}/threads={x}")));
    assert_eq!(groups, expected.as_flattened());
    for group in groups {
        let metrics: Vec<&&str> = names
            .iter()
            .filter(|n| n.starts_with(&format!("{group}/")))
            .collect();
        assert!(metrics.is_sorted(), "{group}");
    }
}

#[test]
fn two_sweeps_pair_by_point_and_two_runs_pair_whatever_their_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (base, new) = (sweep_folder(dir.path(), 7), sweep_folder(dir.path(), 10));
    let result = compare::compare(
        &compare::load(&base).unwrap(),
        &compare::load(&new).unwrap(),
    );
    // Seeds 7, 8, 9 add 14, 21, 28 ops/s; seeds 10, 11, 12 add 0, 7, 14.
    let row = result
        .rows
        .iter()
        .find(|r| r.metric == "rwsem/threads=1/roles.reclaim.ops_per_s")
        .unwrap();
    assert_eq!((row.base.mean, row.new.mean), (1021.0, 1007.0));
    assert!(!row.changed, "ranges 1014..1028 and 1000..1014 touch");

    // Two run files: one group each, compared although the locks differ.
    let load_run = |index: usize| {
        let results = rmap_storm::fileio::results::read_sweep(&base).unwrap();
        let path = dir.path().join(format!("run{index}.json"));
        let json = serde_json::to_string(&results.runs[index].report).unwrap();
        std::fs::write(&path, json).unwrap();
        compare::load(&path).unwrap()
    };
    let (spin, rwsem) = (load_run(0), load_run(1));
    assert_eq!(spin.keys().next().unwrap().lock, LockKind::Spinlock);
    let result = compare::compare(&spin, &rwsem);
    let row = result
        .rows
        .iter()
        .find(|r| r.metric == "roles.reclaim.ops_per_s")
        .unwrap();
    assert_eq!((row.base.mean, row.new.mean), (914.0, 1014.0));
}

#[test]
fn a_file_that_is_no_run_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.json");
    std::fs::write(&path, "{\"schema\": 1}").unwrap();
    let err = compare::load(&path).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("not a run or sweep JSON"), "{err}");
    assert_eq!(
        compare::load(&dir.path().join("missing"))
            .unwrap_err()
            .exit_code(),
        2
    );
}

#[test]
fn sweeps_over_different_x_values_pair_by_value_and_sort_numerically() {
    let dir = tempfile::tempdir().unwrap();
    let base = sweep_folder(dir.path(), 7);
    let wider = rmap_storm::results::SweepParams {
        x: rmap_storm::results::XAxis::Threads(vec![2, 4, 16]),
        ..sweep_fake::params()
    };
    let new = sweep_folder_of(dir.path(), wider);
    let result = compare::compare(
        &compare::load(&base).unwrap(),
        &compare::load(&new).unwrap(),
    );
    assert_eq!(result.only_base, ["spinlock/threads=1", "rwsem/threads=1"]);
    assert_eq!(result.only_new, ["spinlock/threads=16", "rwsem/threads=16"]);
    // threads=2 of one is threads=2 of the other, though at another x position.
    let row = result
        .rows
        .iter()
        .find(|r| r.metric == "rwsem/threads=2/roles.reclaim.ops_per_s")
        .unwrap();
    assert_eq!((row.change_pct, row.changed), (0.0, false));
    // 16 after 4, though "16" < "4" as text.
    let keys: Vec<String> = compare::load(&new)
        .unwrap()
        .keys()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(
        keys[..3],
        [
            "spinlock/threads=2",
            "spinlock/threads=4",
            "spinlock/threads=16"
        ]
    );
}
