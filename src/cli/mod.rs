//! One file per subcommand: its clap `Args` and a `run(args) -> Result<()>`.
//! Each turns arguments into a config for the layer below and hands printing to
//! `report`; none formats figures itself.

pub mod duration;
pub mod inspect;
pub mod torture;
