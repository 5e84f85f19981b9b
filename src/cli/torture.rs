//! `rmap-storm torture` (being built).
use crate::Result;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> Result<()> {
    Err(crate::Error::failed("torture is not built yet"))
}
