//! What the tests that run the real binary share. Each test crate uses a
//! part of it, so the rest would be dead code there.
#![allow(dead_code)]

use std::process::{Command, Output};

/// `rmap-storm SUBCOMMAND ARGS...` run from the crate root (where the
/// models are), with `env` added to its environment.
pub fn rmap_storm_env(subcommand: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rmap-storm"));
    if !subcommand.is_empty() {
        cmd.arg(subcommand);
    }
    cmd.args(args)
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// `rmap-storm SUBCOMMAND ARGS...` run from the crate root.
pub fn rmap_storm(subcommand: &str, args: &[&str]) -> Output {
    rmap_storm_env(subcommand, args, &[])
}

/// Take out of a simulated run's JSON the fields that are this host's (the
/// simulator's wall time, its rate and the process's memory), checking
/// each was reported; what is left is the same for the same seed.
pub fn strip_wall_clock(run: &mut serde_json::Value) {
    let sim = run["sim"].as_object_mut().expect("a simulated run has sim");
    for key in ["wall_s", "events_per_s", "peak_rss_mib"] {
        assert!(sim.remove(key).is_some(), "sim.{key} is reported");
    }
}

/// A process's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every `.toml` file in the crate's folder `dir` (not its subfolders),
/// sorted.
pub fn toml_files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Every model file shipped in models/ (not its subfolders), sorted.
pub fn shipped_models() -> Vec<std::path::PathBuf> {
    toml_files("models")
}
