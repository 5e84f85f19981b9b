//! `rmap-storm inspect` (being built).
use crate::Result;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> Result<()> {
    Err(crate::Error::failed("inspect is not built yet"))
}
