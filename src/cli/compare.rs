//! `rmap-storm compare BASE NEW`: the LKP-style table of every metric.

use crate::Result;
use crate::report::compare;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The base: a run JSON file, a sweep folder or its results.json.
    pub base: PathBuf,
    /// The new side, of the same kinds.
    pub new: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let (base, new) = (compare::load(&args.base)?, compare::load(&args.new)?);
    print!("{}", compare::render(&compare::compare(&base, &new)));
    Ok(())
}
