//! One file per subcommand: its clap `Args` and a `run(args) -> Result<()>`.
//! Each turns arguments into a config for the layer below and hands printing to
//! `report`; none formats figures itself.

pub mod calibrate;
pub mod compare;
pub mod crosscheck;
pub mod duration;
pub mod engine_args;
pub mod inspect;
pub mod merge;
pub mod plot;
pub mod reproduce;
pub mod run;
pub mod sweep;
pub mod torture;
