//! `rmap-storm inspect MODEL.toml [--json] [--dot FILE] [--set K=V]...`:
//! build a model's initial world and print what it holds and what walking it
//! costs (see [`WorldStats`] for each figure).

use crate::fileio::write_atomic;
use crate::model;
use crate::rmap::exec::Binary;
use crate::rmap::{Capacity, LockSet, SpaceId, World, WorldStats, dot};
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The model file.
    pub model: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the anon_vma hierarchy and AVC links as graphviz DOT to FILE
    /// (summarised beyond a few hundred nodes).
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,
    /// Override a model key, e.g. --set world.tasks=500 (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
    /// Then exec the model's first file as a binary in a new task (text,
    /// relocations, the RELRO mprotect) and print the locks its RELRO split
    /// takes.
    #[arg(long)]
    pub exec: bool,
}

/// The locks one exec's RELRO split declared, in the order it takes them.
#[derive(serde::Serialize)]
struct ExecLocks {
    /// anon_vma_clone of the new vma's chain.
    relro_clone: Vec<String>,
    /// vma_prepare: the file's i_mmap, then the anon_vma root.
    relro_commit: Vec<String>,
}

pub fn run(args: Args) -> Result<()> {
    let model = model::load(&args.model, &args.set)?;
    let spec = &model.world;
    let binary = match args.exec {
        false => None,
        true => Some(binary_of(&args.model, spec)?),
    };
    let t0 = Instant::now();
    let mut world = match binary {
        None => World::build(spec),
        Some(bin) => World::build_with(spec, exec_capacity(spec, &bin)),
    };
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    if let Some(path) = &args.dot {
        write_atomic(path, dot::hierarchy_dot(&world).as_bytes())?;
    }
    let stats = world.stats(build_ms);
    let exec = binary.map(|bin| {
        let e = world.exec(bin).expect("capacity covers the exec");
        let names = |set: LockSet| set.iter().map(|r| r.to_string()).collect();
        ExecLocks {
            relro_clone: names(e.relro_split.clone),
            relro_commit: names(e.relro_split.commit),
        }
    });
    let out = if args.json {
        let mut v = serde_json::to_value(&stats).expect("stats serialize");
        if let Some(e) = &exec {
            v["exec"] = serde_json::to_value(e).expect("exec locks serialize");
        }
        v.to_string() + "\n"
    } else {
        table(&stats) + &exec.map_or(String::new(), |e| exec_table(&e))
    };
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| Error::failed(format!("stdout: {e}")))
}

/// The figures as an aligned table: name, value, unit.
fn table(s: &WorldStats) -> String {
    let mib = s.resident_bytes as f64 / (1 << 20) as f64;
    let rows: [(&str, String, &str); 13] = [
        ("tasks", s.tasks.to_string(), "mms"),
        ("vmas", s.vmas.to_string(), ""),
        ("anon_vmas", s.anon_vmas.to_string(), ""),
        ("avcs", s.avcs.to_string(), "anon_vma_chains"),
        ("pages", s.pages.to_string(), "resident"),
        (
            "max_tree_avcs",
            s.max_tree_avcs.to_string(),
            "avcs in the largest anon_vma tree",
        ),
        (
            "hierarchy_depth",
            s.hierarchy_depth.to_string(),
            "anon_vma levels",
        ),
        (
            "walk_vmas_mean",
            format!("{:.2}", s.walk_vmas_mean),
            "vmas per page_referenced",
        ),
        (
            "walk_vmas_max",
            s.walk_vmas_max.to_string(),
            "vmas per page_referenced",
        ),
        (
            "walk_vmas_mean_shared",
            format!("{:.2}", s.walk_vmas_mean_shared),
            "vmas per page_referenced of a COW-shared page",
        ),
        (
            "bytes_per_avc",
            format!("{:.1}", s.bytes_per_avc),
            "B (kernel: 64)",
        ),
        (
            "resident_bytes",
            s.resident_bytes.to_string(),
            &format!("B ({mib:.1} MiB)"),
        ),
        ("build_ms", format!("{:.1}", s.build_ms), "ms"),
    ];
    let sizes: Vec<(String, String, String)> = s
        .sizes
        .iter()
        .map(|o| {
            (
                format!("size_{}", o.object),
                o.model_bytes.to_string(),
                format!("B per object (kernel: {} B, {})", o.kernel_bytes, o.kernel),
            )
        })
        .collect();
    // In field order: the sizes come before the last figure, build_ms.
    let (figures, last) = rows.split_at(rows.len() - 1);
    let rows: Vec<(&str, &str, &str)> = figures
        .iter()
        .map(|(n, v, u)| (*n, v.as_str(), *u))
        .chain(
            sizes
                .iter()
                .map(|(n, v, u)| (n.as_str(), v.as_str(), u.as_str())),
        )
        .chain(last.iter().map(|(n, v, u)| (*n, v.as_str(), *u)))
        .collect();
    let name_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let value_w = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(name, value, unit)| {
            format!("{name:<name_w$}  {value:>value_w$}  {unit}")
                .trim_end()
                .to_string()
                + "\n"
        })
        .collect()
}

/// The binary `--exec` runs: the model's first file, if it can hold one.
fn binary_of(path: &Path, spec: &model::WorldSpec) -> Result<Binary> {
    (spec.files > 0)
        .then(|| Binary::in_file(SpaceId(0), spec.file_pages))
        .flatten()
        .ok_or_else(|| {
            Error::usage(format!(
                "{}: --exec: world.files = {}, world.file_pages = {} hold no binary \
                 (allowed: world.files >= 1 and world.file_pages >= 3)",
                path.display(),
                spec.files,
                spec.file_pages
            ))
        })
}

/// The model's own room, one more task, and its binary's pages (each
/// segment page read into the cache and, for the RW segment, copied).
fn exec_capacity(spec: &model::WorldSpec, bin: &Binary) -> Capacity {
    let base = Capacity::for_spec(spec);
    Capacity {
        mms: base.mms + 1,
        pages: base.pages + bin.text + 2 * bin.rw_pages(),
    }
}

/// The exec's locks as table rows.
fn exec_table(e: &ExecLocks) -> String {
    format!(
        "exec_relro_clone   {}\nexec_relro_commit  {}\n",
        e.relro_clone.join(", "),
        e.relro_commit.join(", ")
    )
}
