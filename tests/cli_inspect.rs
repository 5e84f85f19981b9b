//! `rmap-storm inspect` on the real binary: the figures the issue promises for
//! the AIM7 model, the table and DOT outputs, and one-line exit-2 errors for
//! bad model files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KEYS: [&str; 14] = [
    "tasks",
    "vmas",
    "anon_vmas",
    "avcs",
    "pages",
    "max_tree_avcs",
    "hierarchy_depth",
    "walk_vmas_mean",
    "walk_vmas_max",
    "walk_vmas_mean_shared",
    "bytes_per_avc",
    "resident_bytes",
    "sizes",
    "build_ms",
];

fn inspect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmap-storm"))
        .arg("inspect")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run rmap-storm")
}

fn json(out: &Output) -> serde_json::Map<String, serde_json::Value> {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    v.as_object().expect("an object").clone()
}

#[test]
fn aim7_model_has_the_storm_the_issue_describes() {
    let o = json(&inspect(&["models/aim7-fork-storm.toml", "--json"]));
    let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
    let mut want = KEYS.to_vec();
    keys.sort();
    want.sort();
    assert_eq!(keys, want);
    let num = |k: &str| o[k].as_f64().unwrap();
    assert!(num("tasks") >= 10000.0, "{o:?}");
    assert!(num("walk_vmas_max") >= 10000.0, "{o:?}");
    assert!(num("bytes_per_avc") <= 64.0, "{o:?}");
    assert_eq!(num("hierarchy_depth"), 2.0, "flat fork: root and one level");
}

#[test]
fn every_model_builds_and_the_table_lists_every_figure() {
    for m in ["aim7-fork-storm", "shm-file-storm", "kernbench"] {
        let out = inspect(&[&format!("models/{m}.toml")]);
        assert!(
            out.status.success(),
            "{m}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let names: Vec<&str> = text
            .lines()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        // The table spells the sizes out, one row per object.
        let want: Vec<&str> = KEYS
            .iter()
            .flat_map(|&k| match k {
                "sizes" => vec![
                    "size_anon_vma_chain",
                    "size_anon_vma",
                    "size_vm_area_struct",
                ],
                k => vec![k],
            })
            .collect();
        assert_eq!(names, want, "{m}");
        // Values are right-aligned in one column.
        let ends: Vec<usize> = text
            .lines()
            .map(|l| {
                let value = l.split_whitespace().nth(1).unwrap();
                l.find(value).unwrap() + value.len()
            })
            .collect();
        assert!(ends.windows(2).all(|w| w[0] == w[1]), "{m}: {text}");
    }
}

#[test]
fn shm_model_walks_the_i_mmap_of_every_mapper() {
    let o = json(&inspect(&["models/shm-file-storm.toml", "--json"]));
    assert_eq!(o["walk_vmas_max"].as_u64(), Some(4000));
}

#[test]
fn set_overrides_keys_in_order() {
    let o = json(&inspect(&[
        "models/aim7-fork-storm.toml",
        "--json",
        "--set",
        "world.tasks=40",
        "--set",
        "world.shape=chain",
    ]));
    assert_eq!(o["tasks"].as_u64(), Some(40));
    assert_eq!(o["hierarchy_depth"].as_u64(), Some(40));
}

#[test]
fn dot_is_written_whole_and_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.dot");
    let out = inspect(&[
        "models/aim7-fork-storm.toml",
        "--dot",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let dot = std::fs::read_to_string(&path).unwrap();
    assert!(dot.starts_with("digraph {") && dot.trim_end().ends_with('}'));
    let nodes = dot
        .lines()
        .filter(|l| l.contains("[ label") && !l.contains("->"))
        .count();
    assert!((10..=320).contains(&nodes), "{nodes} nodes");
    assert!(dot.contains("+9996 more children"), "the 10k children fold");
    // No temporary file left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A copy of the AIM7 model with `edit` applied to its text.
fn bad_model(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/aim7-fork-storm.toml"),
    )
    .unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, edit(text)).unwrap();
    path
}

/// Exit status 2 and exactly one stderr line naming file, key and range.
fn assert_usage_error(path: &Path, extra: &[&str], key: &str, allowed: &str) {
    let mut args = vec![path.to_str().unwrap()];
    args.extend(extra);
    let out = inspect(&args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(out.stdout.is_empty());
    for part in [path.to_str().unwrap(), key, &format!("(allowed: {allowed}")] {
        assert!(err.contains(part), "{err:?} lacks {part:?}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line_naming_file_key_and_range() {
    let dir = tempfile::tempdir().unwrap();
    // (text to replace, or "" to append; its replacement; key; allowed range)
    let cases = [
        (
            "[world]\n",
            "[world]\nbogus = 1\n",
            "world.bogus",
            "seed, ancestors",
        ),
        (
            "tasks = 10001",
            "tasks = \"many\"",
            "world.tasks",
            "1..=1000000",
        ),
        ("tasks = 10001", "tasks = 0", "world.tasks", "1..=1000000"),
        (
            "[world]\n",
            "[world]\nfan_out = 0\n",
            "world.fan_out",
            "1..=1000000",
        ),
        (
            "pages_per_vma = 32",
            "pages_per_vma = 100",
            "world.pages_per_vma",
            "1..=63",
        ),
        ("cow = 0.1", "cow = 1.5", "world.cow", "0.0..=1.0"),
        ("[world]", "[wrld]", "wrld", "world, workload, memory"),
    ];
    for (from, to, key, allowed) in cases {
        let path = bad_model(dir.path(), |t| {
            assert!(t.contains(from), "the model no longer has '{from}'");
            t.replace(from, to)
        });
        assert_usage_error(&path, &[], key, allowed);
    }
}

#[test]
fn bad_overrides_and_syntax_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = bad_model(dir.path(), |t| t);
    assert_usage_error(
        &good,
        &["--set", "world.tasks=0"],
        "world.tasks",
        "1..=1000000",
    );
    assert_usage_error(
        &good,
        &["--set", "world.nope=1"],
        "world.nope",
        "seed, ancestors",
    );
    assert_usage_error(
        &good,
        &["--set", "world.shape=ring"],
        "world.shape",
        "flat, chain, tree",
    );
    let broken = bad_model(dir.path(), |t| t.replace("tasks = 10001", "tasks = = 3"));
    let text = std::fs::read_to_string(&broken).unwrap();
    let line = text.lines().position(|l| l.starts_with("tasks")).unwrap() + 1;
    assert_usage_error(
        &broken,
        &[],
        &format!("line {line}, column 9"),
        "TOML 1.0 syntax",
    );
}
