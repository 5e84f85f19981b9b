//! `rmap-storm inspect MODEL.toml [--json] [--dot FILE] [--set K=V]...`:
//! build a model's initial world and print what it holds and what walking it
//! costs (see [`WorldStats`] for each figure).

use crate::model;
use crate::rmap::{World, WorldStats, dot};
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
}

pub fn run(args: Args) -> Result<()> {
    let model = model::load(&args.model, &args.set)?;
    let t0 = Instant::now();
    let world = World::build(&model.world);
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    if let Some(path) = &args.dot {
        write_atomically(path, dot::hierarchy_dot(&world).as_bytes())?;
    }
    let stats = world.stats(build_ms);
    let out = if args.json {
        serde_json::to_string(&stats).expect("stats serialize") + "\n"
    } else {
        table(&stats)
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

/// Write `bytes` to a temporary file next to `path`, then rename it over
/// `path`, so a reader never sees a half-written graph.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = |e: std::io::Error| Error::failed(format!("{}: cannot write: {e}", path.display()));
    let name = path
        .file_name()
        .ok_or_else(|| Error::usage(format!("{}: --dot needs a file name", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp.{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}
