//! Files written by the schema-1 build (tests/data/schema1: a `run --json`
//! and `--csv`, and the two shard folders of one sweep, as that build wrote
//! them) are still read by compare, merge and plot; a schema newer than this
//! build's is refused in one line.

use rmap_storm::fileio::{self, results::read_sweep};
use rmap_storm::report::compare;
use rmap_storm::results::{RunReport, SCHEMA};
use rmap_storm::sweep;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/schema1")
        .join(rel)
}

#[test]
fn compare_reads_a_schema_1_run_and_its_failed_count_is_zero() {
    let old: RunReport = fileio::read_json(&data("run.json")).unwrap();
    assert_eq!(old.schema, 1);
    assert!(old.roles.values().all(|r| r.failed == 0 && r.gave_up == 0));
    assert_eq!(old.cpus, 0, "an old run reports no CPUs");
    let mut new = old.clone();
    new.schema = SCHEMA;
    new.roles.get_mut("touch").unwrap().failed = 7;
    let dir = tempfile::tempdir().unwrap();
    let new_path = dir.path().join("new.json");
    fileio::write_json(&new_path, &new).unwrap();
    let result = compare::compare(
        &compare::load(&data("run.json")).unwrap(),
        &compare::load(&new_path).unwrap(),
    );
    let failed = result
        .rows
        .iter()
        .find(|r| r.metric == "roles.touch.failed")
        .expect("both sides have the metric");
    assert_eq!((failed.base.mean, failed.new.mean), (0.0, 7.0));
    assert!(result.only_base.is_empty() && result.only_new.is_empty());
}

#[test]
fn merge_joins_schema_1_shards_into_a_schema_2_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged");
    let merged = sweep::merge(&[data("shard1"), data("shard2")], &out).unwrap();
    assert_eq!((merged.schema, merged.runs.len()), (SCHEMA, 2));
    assert!(
        merged.runs.iter().all(|r| r.report.schema == 1),
        "each run keeps the schema it was measured under"
    );
    assert_eq!(read_sweep(&out).unwrap(), merged);
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",failed,gave_up,cpus,cpus_used")
    );
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "2 points x 3 roles");
    // A shard's own results.json, schema 1, reads as the same sweep.
    let shard = read_sweep(&data("shard1/results.json")).unwrap();
    assert_eq!(shard.schema, 1);
    assert_eq!(shard.runs, read_sweep(&data("shard1")).unwrap().runs);
}

#[test]
fn the_binary_compares_and_merges_schema_1_files() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_rmap-storm");
    let out = dir.path().join("merged");
    let merge = Command::new(bin)
        .args(["merge"])
        .args([data("shard1"), data("shard2")])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(merge.status.code(), Some(0), "{merge:?}");
    let compare = Command::new(bin)
        .arg("compare")
        .arg(data("shard1"))
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(0), "{compare:?}");
    let table = String::from_utf8(compare.stdout).unwrap();
    assert!(table.contains("roles.touch.ops"), "{table}");
}

#[test]
fn a_newer_schema_is_refused_in_one_line() {
    let mut run: serde_json::Value = fileio::read_json(&data("run.json")).unwrap();
    run["schema"] = 3.into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.json");
    fileio::write_json(&path, &run).unwrap();
    let e = compare::load(&path).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string()
            .ends_with("future.json: schema 3 (this build reads schemas 1..=2)"),
        "{e}"
    );
}

#[test]
fn a_schema_1_csv_parses_with_zero_failures() {
    let file = std::fs::File::open(data("run.csv")).unwrap();
    let rows = rmap_storm::report::csv::from_reader(file).unwrap();
    assert_eq!(rows.len(), 3, "monitor, mprotect, touch");
    assert!(
        rows.iter()
            .all(|r| r.failed == 0 && r.gave_up == 0 && r.ops > 0 && r.cpus == 0)
    );
}
