//! `rmap-storm merge DIR... --out DIR`: join a sweep's shard folders into one
//! folder with results and plots.

use crate::Result;
use crate::report::plot;
use crate::sweep;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Shard folders of one sweep.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged folder (new, empty, or an earlier merge of the same sweep).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let results = sweep::merge(&args.dirs, &args.out)?;
    let plots = plot::write_all(&results, &args.out, None)?;
    println!(
        "merged {} of {} points into {}: results.csv, results.json, {} plots",
        results.runs.len(),
        results.sweep.len(),
        args.out.display(),
        plots.len()
    );
    Ok(())
}
