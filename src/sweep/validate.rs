//! The rules a sweep's parameters must meet, checked before anything runs or is
//! written. Messages name the command-line flag each field comes from.

use crate::locks::LockKind;
use crate::results::{SweepParams, XAxis};
use std::collections::BTreeSet;

impl SweepParams {
    /// Check the parameters; the error is the one line the user sees.
    pub fn validate(&self) -> Result<(), String> {
        check_locks(&self.locks)?;
        match &self.x {
            XAxis::Threads(threads) => check_threads(threads)?,
            XAxis::Vary { key, values } => self.check_vary(key, values)?,
        }
        for set in &self.overrides {
            check_override(set)?;
        }
        if self.repeat == 0 {
            return Err("--repeat: 0 repeats (allowed: 1 or more)".into());
        }
        if self.duration_ms == 0 {
            return Err("--duration: zero (allowed: 1ms or more)".into());
        }
        if let Some(shard) = self.shard
            && shard.index as usize > self.len()
        {
            return Err(format!(
                "--shard {shard}: the sweep has only {} points (allowed: I <= {})",
                self.len(),
                self.len()
            ));
        }
        Ok(())
    }

    fn check_vary(&self, key: &str, values: &[String]) -> Result<(), String> {
        check_key("--vary", key)?;
        if values.is_empty() || values.iter().any(String::is_empty) {
            return Err(format!(
                "--vary {key}: needs values, e.g. --vary {key}=V1,V2 (no empty value)"
            ));
        }
        distinct("--vary", values)?;
        if let Some(0) = self.threads {
            return Err("--threads: 0 is not a thread count (allowed: 1 or more)".into());
        }
        let set_too = self
            .overrides
            .iter()
            .any(|s| s.split('=').next() == Some(key));
        if set_too {
            return Err(format!("--vary {key}: also given with --set; give it once"));
        }
        Ok(())
    }
}

fn check_locks(locks: &[LockKind]) -> Result<(), String> {
    if locks.is_empty() {
        let valid: Vec<&str> = LockKind::ALL.iter().map(|k| k.name()).collect();
        return Err(format!(
            "--locks: empty lock list (valid: {})",
            valid.join(", ")
        ));
    }
    distinct("--locks", locks)
}

fn check_threads(threads: &[u32]) -> Result<(), String> {
    if threads.is_empty() {
        return Err("--threads: empty list (allowed: thread counts of 1 or more)".into());
    }
    if threads.contains(&0) {
        return Err("--threads: 0 is not a thread count (allowed: 1 or more)".into());
    }
    distinct("--threads", threads)
}

/// `SECTION.KEY=VALUE`, as `--set` takes it.
fn check_override(set: &str) -> Result<(), String> {
    match set.split_once('=') {
        Some((key, value)) if !value.is_empty() => check_key("--set", key),
        _ => Err(format!("--set {set}: expected SECTION.KEY=VALUE")),
    }
}

/// A model key: dotted, every part a non-empty name.
fn check_key(flag: &str, key: &str) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let named = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if parts.len() < 2 || !parts.iter().all(named) {
        return Err(format!("{flag} {key}: expected a model key SECTION.KEY"));
    }
    Ok(())
}

/// Reject a list that names a value twice (it would make two points one).
fn distinct<T: Ord + std::fmt::Display>(flag: &str, items: &[T]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    match items.iter().find(|item| !seen.insert(*item)) {
        Some(item) => Err(format!("{flag}: {item} listed twice")),
        None => Ok(()),
    }
}
