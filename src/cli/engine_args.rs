//! `--engine`, `--cpus`, `--preempt`, `--machine`: where a run runs, shared
//! by every subcommand that runs something. Checked before anything runs:
//! a simulator option without `--engine sim`, a CPU count out of range or a
//! bad profile is one line and exit 2. A storm on the native engine reads
//! `--machine` too, for the costs of the kernel work it only stands for.

use crate::engine::RunEngine;
use crate::engine::sim::{MAX_CPUS, Preempt, SimSpec};
use crate::model::machine::{self, MachineProfile};
use crate::{Error, Result};
use clap::ValueEnum;
use std::path::PathBuf;

/// Which engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum EngineName {
    /// This machine's threads.
    #[default]
    Native,
    /// The simulator: virtual CPUs of --machine, deterministic for --seed.
    Sim,
}

/// Where to run.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct EngineArgs {
    /// native (this machine's threads) or sim (virtual CPUs of --machine,
    /// times in virtual seconds)
    #[arg(long, value_enum, default_value_t = EngineName::Native)]
    pub engine: EngineName,
    /// Virtual CPUs (sim only, 1..=4096) [default: the profile's CPUs]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub cpus: Option<String>,
    /// The kernel's preemption model (sim only) [default: voluntary]
    #[arg(long, value_enum)]
    pub preempt: Option<Preempt>,
    /// Machine profile: the simulated machine, and the costs of kernel work
    /// a native storm only stands for [default: models/machines/default.toml]
    #[arg(long, value_name = "PROFILE")]
    pub machine: Option<PathBuf>,
}

impl EngineArgs {
    /// The simulated machine, or None for the native engine (a lone lock's
    /// torture, which needs no profile natively).
    pub fn sim(&self) -> Result<Option<SimSpec>> {
        match self.run_engine(&["--machine"])? {
            RunEngine::Native { .. } => Ok(None),
            RunEngine::Sim(spec) => Ok(Some(spec)),
        }
    }

    /// Where a storm runs. `--cpus` and `--preempt` need `--engine sim`, as
    /// do the flags in `sim_only`.
    pub fn run_engine(&self, sim_only: &[&str]) -> Result<RunEngine> {
        if self.engine == EngineName::Native {
            for (set, flag) in [
                (self.cpus.is_some(), "--cpus"),
                (self.preempt.is_some(), "--preempt"),
                (self.machine.is_some(), "--machine"),
            ] {
                if set && (flag != "--machine" || sim_only.contains(&flag)) {
                    return Err(Error::usage(format!(
                        "{flag}: only with --engine sim (the native engine runs on this machine's CPUs)"
                    )));
                }
            }
        }
        let path = self
            .machine
            .clone()
            .unwrap_or_else(MachineProfile::default_path);
        let machine = machine::load(&path)?;
        if self.engine == EngineName::Native {
            return Ok(RunEngine::Native { machine });
        }
        let cpus = match &self.cpus {
            Some(text) => parse_cpus(text)?,
            None => default_cpus(&machine),
        };
        Ok(RunEngine::Sim(SimSpec {
            cpus,
            preempt: self.preempt.unwrap_or_default(),
            machine,
        }))
    }
}

/// One `--cpus` value.
pub fn parse_cpus(text: &str) -> Result<usize> {
    match text.trim().parse::<i64>() {
        Ok(n) if (1..=MAX_CPUS as i64).contains(&n) => Ok(n as usize),
        Ok(n) => Err(Error::usage(format!(
            "--cpus: {n} is out of range (allowed: 1..={MAX_CPUS})"
        ))),
        Err(_) => Err(Error::usage(format!(
            "--cpus: '{text}' is not a number (allowed: 1..={MAX_CPUS})"
        ))),
    }
}

/// The profile's own CPU count, within the simulator's limit.
fn default_cpus(machine: &MachineProfile) -> usize {
    (machine.topology.cpus() as usize).clamp(1, MAX_CPUS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_out_of_range_or_garbage_is_a_usage_error_naming_the_range() {
        for bad in ["0", "4097", "-3", "many"] {
            let e = parse_cpus(bad).unwrap_err().to_string();
            assert!(e.contains("--cpus") && e.contains("1..=4096"), "{bad}: {e}");
        }
        assert_eq!(parse_cpus("64").unwrap(), 64);
    }

    #[test]
    fn simulator_options_need_the_simulator() {
        let args = EngineArgs {
            cpus: Some("8".into()),
            ..EngineArgs::default()
        };
        let e = args.sim().unwrap_err().to_string();
        assert!(e.contains("--cpus") && e.contains("--engine sim"), "{e}");
        assert!(EngineArgs::default().sim().unwrap().is_none());
    }
}
