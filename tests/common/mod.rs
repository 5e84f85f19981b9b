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
