//! `rmap-storm reproduce SCENARIO | --all | --list [--engine sim|native]
//! [--machine PROFILE] [--quick] [--out DIR] [--readme FILE]`: run a source's
//! claims (models/reproduce/*.toml) and print each beside what was observed.

use super::engine_args::EngineName;
use crate::engine::RunEngine;
use crate::engine::sim::{Preempt, SimSpec};
use crate::fileio::{replace_between, section, write_atomic, write_json};
use crate::model::machine::{self, MachineProfile};
use crate::report::reproduce as table;
use crate::reproduce::{self, scenario};
use crate::results::reproduce::ScenarioReport;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Markers of the README's Reproductions table.
const BEGIN: &str = "<!-- reproduce:begin -->";
const END: &str = "<!-- reproduce:end -->";

/// Reproduce the seeds' and the kernel's measured effects, observed beside expected.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Scenarios live in models/reproduce/ (a name there, or a path). One machine profile serves every scenario; a scenario sets only what its source states (CPUs, threads, era, kinds, preemption). Verdicts: reproduced (direction and order of magnitude), direction only, not reproduced, reported (no claim to check)."
)]
pub struct Args {
    /// The scenario: a name in models/reproduce/ or a file
    #[arg(required_unless_present_any = ["list", "all"], conflicts_with_all = ["list", "all"])]
    pub scenario: Option<String>,
    /// List the scenarios and their sources
    #[arg(long, conflicts_with = "all")]
    pub list: bool,
    /// Run every scenario
    #[arg(long)]
    pub all: bool,
    /// sim (virtual CPUs, the scenarios' CPU counts and preemption models) or
    /// native (this machine; CPU counts and preemption models are its own)
    #[arg(long, value_enum, default_value_t = EngineName::Sim)]
    pub engine: EngineName,
    /// The machine profile of every scenario [default: models/machines/default.toml]
    #[arg(long, value_name = "PROFILE")]
    pub machine: Option<PathBuf>,
    /// Small sizes and short runs: seconds per scenario, for checking the
    /// table's shape (its figures are not the claims')
    #[arg(long)]
    pub quick: bool,
    /// Write NAME.json and NAME.md per scenario here (and summary.md with --all)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With --all: replace the Reproductions table of this file (between
    /// `<!-- reproduce:begin -->` and `<!-- reproduce:end -->`)
    #[arg(long, value_name = "FILE")]
    pub readme: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let dir = Path::new(scenario::DIR);
    if args.list {
        return list(dir);
    }
    let paths = match &args.scenario {
        Some(name) => vec![scenario_path(dir, name)],
        None => scenario::list(dir)?,
    };
    if let Some(readme) = &args.readme {
        if !args.all {
            return Err(Error::usage(format!(
                "--readme {}: needs --all (the README's table holds every scenario)",
                readme.display()
            )));
        }
        section(readme, BEGIN, END)?;
    }
    let engine = engine(&args)?;
    let prepared = paths
        .iter()
        .map(|p| reproduce::prepare(p, args.quick, &engine))
        .collect::<Result<Vec<_>>>()?;
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| Error::usage(format!("{}: cannot create: {e}", out.display())))?;
    }
    let mut tables = Vec::new();
    for (path, p) in paths.iter().zip(prepared) {
        let t = run_one(path, p, &args)?;
        print!("{}", table::text(&t));
        println!();
        tables.push(t);
    }
    if args.all {
        let summary = summary(&tables);
        if let Some(out) = &args.out {
            write_atomic(&out.join("summary.md"), summary.as_bytes())?;
        }
        if let Some(readme) = &args.readme {
            replace_between(readme, BEGIN, END, &summary)?;
        }
    }
    Ok(())
}

fn run_one(path: &Path, p: reproduce::Prepared, args: &Args) -> Result<ScenarioReport> {
    let bar = crate::sweep::progress::bar();
    bar.set_length(p.len() as u64);
    bar.set_message(scenario::Scenario::name(path));
    let outcome = p.run(&|| bar.inc(1));
    bar.finish_and_clear();
    let t = outcome?.table;
    if let Some(out) = &args.out {
        write_json(&out.join(format!("{}.json", t.name)), &t)?;
        write_atomic(
            &out.join(format!("{}.md", t.name)),
            table::markdown(&t).as_bytes(),
        )?;
    }
    Ok(t)
}

/// A name in the scenario folder, or a path as given.
fn scenario_path(dir: &Path, name: &str) -> PathBuf {
    let named = dir.join(format!("{name}.toml"));
    if named.exists() {
        named
    } else {
        PathBuf::from(name)
    }
}

fn list(dir: &Path) -> Result<()> {
    for path in scenario::list(dir)? {
        let s = scenario::load(&path)?;
        println!("{:<22} {}", scenario::Scenario::name(&path), s.title);
        println!("{:<22} source: {}", "", s.source);
    }
    Ok(())
}

/// Every scenario's claims in one markdown table.
fn summary(tables: &[ScenarioReport]) -> String {
    let mut out = String::from(table::MARKDOWN_HEADER);
    for t in tables {
        out.push_str(&table::markdown_rows(t));
    }
    out
}

fn engine(args: &Args) -> Result<RunEngine> {
    let path = args
        .machine
        .clone()
        .unwrap_or_else(MachineProfile::default_path);
    let machine = machine::load(&path)?;
    Ok(match args.engine {
        EngineName::Native => RunEngine::Native { machine },
        EngineName::Sim => RunEngine::Sim(SimSpec {
            cpus: (machine.topology.cpus() as usize).clamp(1, crate::engine::sim::MAX_CPUS),
            preempt: Preempt::default(),
            machine,
        }),
    })
}
