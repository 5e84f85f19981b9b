//! The rules a sweep's parameters must meet, checked before anything runs or is
//! written. Messages name the command-line flag each field comes from.

use crate::engine::sim::MAX_CPUS;
use crate::locks::LockKind;
use crate::results::{SweepEngine, SweepParams, XAxis};
use std::collections::BTreeSet;

impl SweepParams {
    /// Check the parameters; the error is the one line the user sees.
    pub fn validate(&self) -> Result<(), String> {
        check_locks(&self.locks)?;
        match &self.x {
            XAxis::Threads(threads) => check_threads(threads)?,
            XAxis::Vary { key, values } => self.check_vary(key, values)?,
            XAxis::Cpus(cpus) => self.check_cpus_axis(cpus)?,
        }
        if let Some(0) = self.threads {
            return Err("--threads: 0 is not a thread count (allowed: 1 or more)".into());
        }
        check_engine(&self.engine)?;
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
        let set_too = self
            .overrides
            .iter()
            .any(|s| s.split('=').next() == Some(key));
        if set_too {
            return Err(format!("--vary {key}: also given with --set; give it once"));
        }
        Ok(())
    }

    fn check_cpus_axis(&self, cpus: &[u32]) -> Result<(), String> {
        if !self.engine.is_sim() {
            return Err(SIM_ONLY.into());
        }
        if cpus.is_empty() {
            return Err(format!("--cpus: empty list (allowed: 1..={MAX_CPUS})"));
        }
        cpus.iter().try_for_each(|&n| check_cpu_count(n))?;
        distinct("--cpus", cpus)?;
        if self.engine.cpus.is_some() {
            return Err("--cpus: the CPUs are the x axis and also fixed for every point".into());
        }
        Ok(())
    }
}

/// The refusal of a simulator option on the native engine.
const SIM_ONLY: &str =
    "--cpus: only with --engine sim (the native engine runs on this machine's CPUs)";

/// The simulator's options only on the simulator, and in range there.
fn check_engine(engine: &SweepEngine) -> Result<(), String> {
    if !engine.is_sim() {
        if engine.cpus.is_some() {
            return Err(SIM_ONLY.into());
        }
        if engine.preempt.is_some() {
            return Err("--preempt: only with --engine sim".into());
        }
    }
    engine.cpus.map_or(Ok(()), check_cpu_count)
}

fn check_cpu_count(n: u32) -> Result<(), String> {
    if (1..=MAX_CPUS as u32).contains(&n) {
        Ok(())
    } else {
        Err(format!(
            "--cpus: {n} is out of range (allowed: 1..={MAX_CPUS})"
        ))
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
