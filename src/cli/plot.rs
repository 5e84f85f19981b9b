//! `rmap-storm plot DIR [--out DIR] [--role ROLE]`: draw a sweep's charts.

use crate::Result;
use crate::fileio::results::read_sweep;
use crate::report::plot;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A sweep folder (or its results.json).
    pub dir: PathBuf,
    /// Where to write the PNG and SVG files [default: the sweep folder].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The role whose throughput and latency are drawn [default: reclaim, else
    /// the model's scaled role].
    #[arg(long)]
    pub role: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    let results = read_sweep(&args.dir)?;
    let out = match args.out {
        Some(out) => out,
        None if args.dir.is_dir() => args.dir.clone(),
        None => args.dir.parent().map(PathBuf::from).unwrap_or_default(),
    };
    for path in plot::write_all(&results, &out, args.role.as_deref())? {
        println!("{}", path.display());
    }
    Ok(())
}
