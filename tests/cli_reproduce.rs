//! `rmap-storm reproduce` on the real binary: the scenario list, every
//! shipped scenario's `--quick` table (its shape, not its figures: quick
//! sizes are not the claims'), the same table twice on the simulator, and
//! bad input as one line and exit 2.

mod common;

use common::text;
use rmap_storm::results::reproduce::ScenarioReport;
use std::path::{Path, PathBuf};
use std::process::Output;

fn reproduce(args: &[&str]) -> Output {
    common::rmap_storm("reproduce", args)
}

fn scenarios() -> Vec<PathBuf> {
    common::toml_files("models/reproduce")
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The `[[expect]]` tables a scenario file holds.
fn claims(path: &Path) -> usize {
    let table: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    table["expect"].as_array().unwrap().len()
}

#[test]
fn the_list_names_every_scenario_with_its_source() {
    let out = reproduce(&["--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let paths = scenarios();
    assert!(paths.len() >= 7, "a scenario per source: {paths:?}");
    for p in &paths {
        assert!(
            stdout.contains(&name(p)),
            "{} missing from\n{stdout}",
            name(p)
        );
    }
    assert_eq!(stdout.matches("source: ").count(), paths.len());
}

#[test]
fn every_scenario_quick_writes_a_well_formed_table() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    for path in scenarios() {
        let n = name(&path);
        let out = reproduce(&[&n, "--quick", "--out", out_dir]);
        assert_eq!(out.status.code(), Some(0), "{n}: {}", text(&out.stderr));
        let report: ScenarioReport =
            serde_json::from_slice(&std::fs::read(dir.path().join(format!("{n}.json"))).unwrap())
                .unwrap();
        assert_eq!(report.name, n);
        assert!(report.quick && report.engine == "sim", "{n}");
        assert_eq!(report.rows.len(), claims(&path), "{n}: one row per claim");
        assert!(!report.runs.is_empty(), "{n}");
        for row in &report.rows {
            assert!(row.observed.is_none_or(|o| !o.is_nan()), "{n}: {row:?}");
            assert!(
                report.runs.iter().any(|r| r.name == row.run),
                "{n}: row names a run that ran: {row:?}"
            );
        }
        let md = std::fs::read_to_string(dir.path().join(format!("{n}.md"))).unwrap();
        let table_rows = md
            .lines()
            .filter(|l| l.starts_with(&format!("| {n} |")))
            .count();
        assert_eq!(table_rows, report.rows.len(), "{n}: markdown rows\n{md}");
        let stdout = text(&out.stdout);
        assert_eq!(
            stdout.matches("  verdict:  ").count(),
            report.rows.len(),
            "{n}"
        );
    }
}

#[test]
fn a_simulated_scenario_gives_the_same_table_twice() {
    let dir = tempfile::tempdir().unwrap();
    let table = |sub: &str| {
        let out_dir = dir.path().join(sub);
        let out = reproduce(&[
            "seed-000-preempt",
            "--quick",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        std::fs::read(out_dir.join("seed-000-preempt.json")).unwrap()
    };
    assert_eq!(table("a"), table("b"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "title = \"t\"\nsource = \"s\"\nera = \"e\"\nmodel = \"models/synchro.toml\"\nduration_ms = 10\n\
         [[runs]]\nname = \"a\"\nlock = \"rwsem\"\n\
         [[expect]]\nwhat = \"w\"\nfigure = \"roles.monitor.ops_per_s\"\nrun = \"b\"\n",
    )
    .unwrap();
    let missing_model = dir.path().join("missing-model.toml");
    std::fs::write(
        &missing_model,
        "title = \"t\"\nsource = \"s\"\nera = \"e\"\nmodel = \"models/nope.toml\"\nduration_ms = 10\n\
         [[runs]]\nname = \"a\"\nlock = \"rwsem\"\n\
         [[expect]]\nwhat = \"w\"\nfigure = \"roles.monitor.ops_per_s\"\nrun = \"a\"\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let o = out_dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["no-such-scenario"],
            "no-such-scenario: cannot read".into(),
        ),
        (
            vec![bad.to_str().unwrap(), "--out", o],
            format!("{}: expect[0].run: no run 'b' (allowed: a)", bad.display()),
        ),
        (
            vec![missing_model.to_str().unwrap(), "--out", o],
            "run 'a': models/nope.toml: cannot read".into(),
        ),
        (
            vec!["seed-000-preempt", "--readme", "README.md"],
            "--all".into(),
        ),
        (vec![], "required".into()),
        (
            vec!["seed-000-preempt", "--engine", "quantum"],
            "invalid value 'quantum' for '--engine".into(),
        ),
    ];
    for (args, want) in &cases {
        let out = reproduce(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(want.as_str()),
            "{args:?}: want {want:?} in {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!out_dir.join("bad.json").exists(), "nothing written");
}
