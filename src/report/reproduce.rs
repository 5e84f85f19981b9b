//! A reproduction's table, as the terminal shows it and as markdown (the
//! README's and docs/reproduce/'s): each claim, the source's words and
//! figure, the observed figure with its unit, the verdict; then the runs.

use super::units::{fmt_ns, fmt_rate};
use crate::results::reproduce::{Row, ScenarioReport};
use std::fmt::Write;

/// `v` in the unit its figure's name says (`_per_s`, `_ns`, `_share`,
/// `_pct`), else as a plain number.
pub fn fmt_figure(figure: &str, v: f64) -> String {
    let leaf = figure.rsplit('.').next().unwrap_or(figure);
    if !v.is_finite() {
        return format!("{v}");
    }
    if leaf.ends_with("per_s") {
        fmt_rate(v)
    } else if leaf.ends_with("_ns") || figure.contains("latency_ns") {
        fmt_ns(v.max(0.0).round() as u64)
    } else if leaf.ends_with("share") {
        format!("{:.1}%", v * 100.0)
    } else if leaf.ends_with("pct") {
        format!("{v:.1}%")
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// What the source expects, in short: `higher, x1.48`, `~160.0k/s`, `>= 50.0%`.
pub fn expected(row: &Row) -> String {
    let e = &row.expected;
    let mut parts = Vec::new();
    if let Some(d) = &e.direction {
        parts.push(match d.as_str() {
            "same" => format!("same (±{:.0}%)", e.tolerance * 100.0),
            d => d.to_string(),
        });
    }
    if let Some(r) = e.ratio {
        parts.push(format!("x{r:.2}"));
    }
    if let Some(v) = e.value {
        parts.push(format!("~{}", fmt_figure(&row.figure, v)));
    }
    if let Some(v) = e.at_least {
        parts.push(format!(">= {}", fmt_figure(&row.figure, v)));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// What was observed: the ratio and both figures, or the run's figure.
pub fn observed(row: &Row) -> String {
    match row.vs_value {
        Some(b) => format!(
            "{} ({} vs {})",
            row.observed
                .map_or("x inf".to_string(), |r| format!("x{r:.2}")),
            fmt_figure(&row.figure, row.run_value),
            fmt_figure(&row.figure, b)
        ),
        None => fmt_figure(&row.figure, row.run_value),
    }
}

fn compared(row: &Row) -> String {
    match &row.vs {
        Some(vs) => format!("{} vs {}", row.run, vs),
        None => row.run.clone(),
    }
}

/// The terminal's version.
pub fn text(r: &ScenarioReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "reproduce {}: {}", r.name, r.title);
    let _ = writeln!(out, "source: {}", r.source);
    let _ = writeln!(
        out,
        "era: {} | engine {} on {} | {} ms per run{}",
        r.era,
        r.engine,
        r.machine,
        r.duration_ms,
        if r.quick {
            " | --quick: small sizes, figures not comparable"
        } else {
            ""
        }
    );
    let _ = writeln!(out);
    for row in &r.rows {
        let _ = writeln!(out, "{} [{}]", row.what, compared(row));
        if let Some(q) = &row.quote {
            let _ = writeln!(out, "  source:   \"{q}\"");
        }
        let _ = writeln!(out, "  expected: {}", expected(row));
        let _ = writeln!(out, "  observed: {}", observed(row));
        let _ = writeln!(out, "  verdict:  {}", row.verdict.label());
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "runs:");
    for run in &r.runs {
        let _ = writeln!(
            out,
            "  {:<24} {} | lock {} | {} CPUs{} | {} threads | {}",
            run.name,
            run.model,
            run.lock,
            run.cpus,
            run.preempt
                .as_deref()
                .map_or(String::new(), |p| format!(", preempt {p}")),
            run.threads,
            run.progress
        );
    }
    out
}

/// One markdown table row per claim: `| scenario | claim | source says |
/// expected | observed | verdict |`.
pub fn markdown_rows(r: &ScenarioReport) -> String {
    let mut out = String::new();
    for row in &r.rows {
        let _ = writeln!(
            out,
            "| {} | {} [{}] | {} | {} | {} | {} |",
            r.name,
            row.what,
            compared(row),
            row.quote
                .as_deref()
                .map_or("-".into(), |q| format!("\"{q}\"")),
            expected(row),
            observed(row),
            row.verdict.label()
        );
    }
    out
}

/// The header of [`markdown_rows`]'s table.
pub const MARKDOWN_HEADER: &str = "| scenario | claim [runs] | source says | expected | observed | verdict |\n|---|---|---|---|---|---|\n";

/// A whole scenario as markdown: what it is, the claims, the runs.
pub fn markdown(r: &ScenarioReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}: {}\n", r.name, r.title);
    let _ = writeln!(out, "- source: {}", r.source);
    let _ = writeln!(out, "- era: {}", r.era);
    let _ = writeln!(
        out,
        "- engine: {} on {}, {} ms per run{}\n",
        r.engine,
        r.machine,
        r.duration_ms,
        if r.quick { " (--quick)" } else { "" }
    );
    out.push_str(MARKDOWN_HEADER);
    out.push_str(&markdown_rows(r));
    let _ = writeln!(
        out,
        "\n| run | model | lock | CPUs | preempt | threads | progress |\n|---|---|---|---|---|---|---|"
    );
    for run in &r.runs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            run.name,
            run.model,
            run.lock,
            run.cpus,
            run.preempt.as_deref().unwrap_or("-"),
            run.threads,
            run.progress.trim_start_matches("progress: ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_carry_the_unit_their_name_says() {
        assert_eq!(
            fmt_figure("ctx_switches.total_per_s", 160_000.0),
            "160.0k/s"
        );
        assert_eq!(
            fmt_figure("lock_stats.anon_vma.max_wait_ns", 1.6e9),
            "1.60s"
        );
        assert_eq!(fmt_figure("roles.reclaim.latency_ns.max", 1500.0), "1.5us");
        assert_eq!(fmt_figure("lock_stats.anon_vma.wait_share", 0.5), "50.0%");
        assert_eq!(fmt_figure("progress.livelock", 1.0), "1");
    }
}
