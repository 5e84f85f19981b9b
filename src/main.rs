//! The `rmap-storm` command line: parses arguments, hands them to one subcommand,
//! and maps its outcome to an exit status (0 ok, 1 failed, 2 bad input).

use clap::{Parser, Subcommand};
use rmap_storm::cli;
use std::process::ExitCode;

/// Model the Linux reverse map and the locks that guard it.
#[derive(Parser)]
#[command(name = "rmap-storm", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a reclaim storm on real threads or virtual CPUs: the main job (default model: aim7-fork-storm).
    Run(cli::run::Args),
    /// Build a model's initial world and print its rmap statistics.
    Inspect(cli::inspect::Args),
    /// Stress one lock kind locktorture/synchro-test style, checking exclusion.
    Torture(cli::torture::Args),
    /// Run a model at every (threads or --vary value, lock, repeat) point; write results and plots.
    Sweep(cli::sweep::Args),
    /// Draw a sweep's scaling curves as PNG and SVG.
    Plot(cli::plot::Args),
    /// Compare two runs or sweeps, LKP style: base, %change, new for every metric.
    Compare(cli::compare::Args),
    /// Join the shard folders of one sweep into one folder with results and plots.
    Merge(cli::merge::Args),
    /// Measure this machine and write a machine profile for the simulator.
    Calibrate(cli::calibrate::Args),
    /// Reproduce a seed's or a kernel thread's measured effect: expected beside observed.
    Reproduce(cli::reproduce::Args),
    /// Run models natively and on the simulator with the same seeds; print the error table.
    Crosscheck(cli::crosscheck::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and exit 0. A real parse error is bad
            // input: one line (clap's first), exit 2.
            if !e.use_stderr() {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(2);
            }
            let text = e.render().to_string();
            let line = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            eprintln!("rmap-storm: {}", line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    let outcome = match cli.command {
        Command::Run(args) => cli::run::run(args),
        Command::Inspect(args) => cli::inspect::run(args),
        Command::Torture(args) => cli::torture::run(args),
        Command::Sweep(args) => cli::sweep::run(args),
        Command::Plot(args) => cli::plot::run(args),
        Command::Compare(args) => cli::compare::run(args),
        Command::Merge(args) => cli::merge::run(args),
        Command::Calibrate(args) => cli::calibrate::run(args),
        Command::Reproduce(args) => cli::reproduce::run(args),
        Command::Crosscheck(args) => cli::crosscheck::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmap-storm: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
