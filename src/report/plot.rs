//! Scaling-curve plots of a sweep, as PNG and SVG: throughput, p99 latency,
//! context switches and time spent waiting, each against the sweep's x axis,
//! one line per lock.
//!
//! Each line joins the mean of a point's repeats; its error bars span the
//! repeats' min..max (drawn when there are two or more). The throughput chart
//! adds will-it-scale's `linear` reference for each lock, dashed: the first x
//! point's throughput times x / first x, drawn when the x axis is a thread
//! count (`threads` or a `*.threads` model key) or the simulator's CPUs.
//!
//! Titles name the engine and the CPUs it ran on ("sim, 64 virtual CPUs of
//! MACHINE", "native, 2 online CPUs"). On a thread-count axis a grey dashed
//! line marks the CPUs: past it the scaled role's threads share CPUs by
//! time-slicing, so throughput beyond it is not scaling (will-it-scale runs
//! up to the online CPUs for this reason).
//!
//! Text comes from DejaVu Sans embedded by the `dejavu` crate, so no system font
//! is needed. Files are written atomically, like every sweep file.

use super::pick::{default_role, main_lock_class, roles};
use super::stats::Summary;
use crate::fileio::{commit_temp, temp_path, write_atomic};
use crate::locks::LockKind;
use crate::results::{RunReport, SweepResults, XAxis};
use crate::{Error, Result};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Pixel size of every plot.
const SIZE: (u32, u32) = (1024, 640);
const FONT: &str = "sans-serif";
/// Pixels between the canvas edge and the chart (and the title's width).
const MARGIN: u32 = 16;

/// One chart, ready to draw: the data prepared, no drawing state.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// File stem: NAME.png and NAME.svg.
    pub name: &'static str,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Whether y tick labels use k/M/G (rates) or plain numbers.
    pub si_ticks: bool,
    pub lines: Vec<Line>,
    /// Vertical marks across the chart: where the CPUs run out.
    pub markers: Vec<Marker>,
}

/// A labelled vertical line at `x`.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    pub x: f64,
    /// `2 online CPUs`, `64 virtual CPUs`.
    pub label: String,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub label: String,
    pub lock: LockKind,
    /// Dashed: a reference line or the second figure of a lock.
    pub dashed: bool,
    pub points: Vec<Band>,
}

/// A point of a line: the repeats' mean and their min..max.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band {
    pub x: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// Where the x values sit on the axis: their numbers when every value is one
/// (thread counts, task counts), else evenly spaced categories.
struct Axis {
    key: String,
    labels: Vec<String>,
    positions: Vec<f64>,
    categorical: bool,
}

/// Draw every chart of `results` into `out` as PNG and SVG; `role` picks the
/// role whose throughput and latency are drawn (see [`default_role`]).
pub fn write_all(results: &SweepResults, out: &Path, role: Option<&str>) -> Result<Vec<PathBuf>> {
    if out.exists() && !out.is_dir() {
        let shown = out.display();
        return Err(Error::usage(format!(
            "--out {shown}: exists and is not a folder"
        )));
    }
    let charts = charts(results, role)?;
    let axis = Axis::of(&results.sweep.x);
    register_font()?;
    std::fs::create_dir_all(out)
        .map_err(|e| Error::failed(format!("creating {}: {e}", out.display())))?;
    let mut written = Vec::new();
    for chart in &charts {
        let png = out.join(format!("{}.png", chart.name));
        draw_file(
            BitMapBackend::new(&temp_path(&png), SIZE),
            chart,
            &axis,
            &png,
        )?;
        commit_temp(&png)?;
        let svg_path = out.join(format!("{}.svg", chart.name));
        let mut svg = String::new();
        draw_file(
            SVGBackend::with_string(&mut svg, SIZE),
            chart,
            &axis,
            &svg_path,
        )?;
        write_atomic(&svg_path, svg.as_bytes())?;
        written.extend([png, svg_path]);
    }
    Ok(written)
}

/// The four charts of `results`, data only.
pub fn charts(results: &SweepResults, role: Option<&str>) -> Result<Vec<Chart>> {
    if results.runs.is_empty() {
        return Err(Error::usage("the sweep holds no finished point to plot"));
    }
    let reports = results.runs.iter().map(|r| &r.report);
    let role = match role {
        Some(role) => role.to_string(),
        None => default_role(reports.clone()).unwrap_or_default(),
    };
    let roles = roles(reports);
    if !roles.contains(&role.as_str()) {
        return Err(Error::usage(format!(
            "--role {role}: no run has this role (roles: {})",
            roles.join(", ")
        )));
    }
    let axis = Axis::of(&results.sweep.x);
    let plot = Plotter {
        results,
        axis: &axis,
        role: &role,
    };
    Ok(vec![
        plot.throughput(),
        plot.latency(),
        plot.ctx_switches(),
        plot.waiting(),
    ])
}

/// What the chart builders share.
struct Plotter<'a> {
    results: &'a SweepResults,
    axis: &'a Axis,
    role: &'a str,
}

impl Plotter<'_> {
    fn throughput(&self) -> Chart {
        let role = self.role;
        let mut lines = self.lines("", false, |r| Some(r.roles.get(role)?.ops_per_s));
        if self.axis.scales() {
            let linear: Vec<Line> = lines.iter().filter_map(linear_reference).collect();
            lines.extend(linear);
        }
        let (title, y_label) = (format!("{role} throughput"), format!("{role} ops/s"));
        self.chart("throughput", &title, &y_label, true, lines)
    }

    fn latency(&self) -> Chart {
        let role = self.role;
        let mut lines = self.lines("", false, |r| {
            Some(r.roles.get(role)?.latency_ns.p99 as f64)
        });
        let unit = scale_to_time_unit(&mut lines);
        let y_label = format!("p99 latency of one {role} op ({unit})");
        self.chart(
            "latency_p99",
            &format!("{role} p99 latency"),
            &y_label,
            false,
            lines,
        )
    }

    fn ctx_switches(&self) -> Chart {
        let mut lines = self.lines(" voluntary", false, |r| {
            Some(r.ctx_switches.voluntary_per_s)
        });
        lines.extend(self.lines(" involuntary", true, |r| {
            Some(r.ctx_switches.involuntary_per_s)
        }));
        let y_label = "context switches/s (all threads)";
        self.chart("ctx_switches", "context switches", y_label, true, lines)
    }

    fn waiting(&self) -> Chart {
        let class = self
            .results
            .runs
            .iter()
            .find_map(|r| main_lock_class(&r.report));
        let class = class.map_or("lock", |(name, _)| name).to_string();
        let lines = self.lines("", false, |r| {
            Some(main_lock_class(r)?.1.wait_share * 100.0)
        });
        let y_label = format!("time waiting for {class} (% of thread time)");
        self.chart(
            "wait_share",
            &format!("{class} wait share"),
            &y_label,
            false,
            lines,
        )
    }

    fn chart(
        &self,
        name: &'static str,
        what: &str,
        y_label: &str,
        si: bool,
        lines: Vec<Line>,
    ) -> Chart {
        let model = Path::new(&self.results.sweep.model)
            .file_stem()
            .map_or(self.results.sweep.model.clone(), |s| {
                s.to_string_lossy().into_owned()
            });
        let repeats = self.results.sweep.repeat;
        let bars = if repeats > 1 {
            format!("; bars: min..max of {repeats} runs")
        } else {
            String::new()
        };
        Chart {
            name,
            title: format!(
                "{model} ({}): {what} vs {}{bars}",
                self.engines(),
                self.axis.key
            ),
            x_label: self.axis.description(),
            y_label: y_label.to_string(),
            si_ticks: si,
            lines,
            markers: self.cpu_markers(),
        }
    }

    /// Who ran the points and on how many CPUs: `sim, 64 virtual CPUs of
    /// MACHINE`, `native, 2 online CPUs`, or `ENGINE engine` for runs that do
    /// not report their CPUs (files from before they were reported).
    fn engines(&self) -> String {
        let reports: Vec<&RunReport> = self.results.runs.iter().map(|r| &r.report).collect();
        let engines = distinct(reports.iter().map(|r| r.engine.as_str()));
        let described = engines.iter().map(|&engine| {
            let mine: Vec<&RunReport> = reports
                .iter()
                .copied()
                .filter(|r| r.engine == engine)
                .collect();
            match (cpu_span(&mine), engine) {
                (None, _) => format!("{engine} engine"),
                (Some(cpus), SIM) => {
                    let machines = distinct(
                        mine.iter()
                            .filter_map(|r| Some(r.sim.as_ref()?.machine.as_str())),
                    );
                    format!("sim, {cpus} virtual CPUs of {}", machines.join(" / "))
                }
                (Some(cpus), _) => format!("{engine}, {cpus} online CPUs"),
            }
        });
        described.collect::<Vec<_>>().join(" + ")
    }

    /// One mark per CPU count the runs had, on a thread-count axis, where it
    /// falls within the axis's x values.
    fn cpu_markers(&self) -> Vec<Marker> {
        if !self.axis.counts_threads() {
            return Vec::new();
        }
        let (lo, hi) = self.axis.span();
        let mut marks: Vec<(u32, &str)> = self
            .results
            .runs
            .iter()
            .map(|r| (r.report.cpus, r.report.engine.as_str()))
            .filter(|&(cpus, _)| cpus > 0 && (lo..=hi).contains(&f64::from(cpus)))
            .collect();
        marks.sort();
        marks.dedup();
        marks
            .into_iter()
            .map(|(cpus, engine)| Marker {
                x: f64::from(cpus),
                label: match engine {
                    SIM => format!("{cpus} virtual CPUs"),
                    _ => format!("{cpus} online CPUs"),
                },
            })
            .collect()
    }

    /// One line per lock of `metric` against x; runs without the metric are skipped.
    fn lines(
        &self,
        suffix: &str,
        dashed: bool,
        metric: impl Fn(&RunReport) -> Option<f64>,
    ) -> Vec<Line> {
        let runs = &self.results.runs;
        let lines = self.results.sweep.locks.iter().map(|&lock| {
            let points = (0..self.axis.positions.len()).filter_map(|x_index| {
                let samples: Vec<f64> = runs
                    .iter()
                    .filter(|r| r.point.lock == lock && r.point.x_index == x_index)
                    .filter_map(|r| metric(&r.report))
                    .collect();
                let s = Summary::of(&samples)?;
                let x = self.axis.positions[x_index];
                Some(Band {
                    x,
                    mean: s.mean,
                    min: s.min,
                    max: s.max,
                    n: s.n,
                })
            });
            Line {
                label: format!("{lock}{suffix}"),
                lock,
                dashed,
                points: points.collect(),
            }
        });
        lines.filter(|l| !l.points.is_empty()).collect()
    }
}

/// The engine name of simulated runs, whose CPUs are virtual.
const SIM: &str = "sim";

/// `64`, or `1-64` when the runs had several CPU counts; None when no run
/// reports its CPUs.
fn cpu_span(reports: &[&RunReport]) -> Option<String> {
    let cpus = reports.iter().map(|r| r.cpus).filter(|&c| c > 0);
    let (lo, hi) = (cpus.clone().min()?, cpus.max()?);
    Some(if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    })
}

/// will-it-scale's `linear`: the first point's mean times x / first x.
fn linear_reference(line: &Line) -> Option<Line> {
    let first = line.points.first().filter(|b| b.x > 0.0)?;
    let points = line.points.iter().map(|b| {
        let y = first.mean * b.x / first.x;
        Band {
            x: b.x,
            mean: y,
            min: y,
            max: y,
            n: 1,
        }
    });
    Some(Line {
        label: format!("{} linear", line.lock),
        lock: line.lock,
        dashed: true,
        points: points.collect(),
    })
}

/// Rescale nanosecond lines to the unit that suits their largest value.
fn scale_to_time_unit(lines: &mut [Line]) -> &'static str {
    let max = lines
        .iter()
        .flat_map(|l| &l.points)
        .map(|b| b.max)
        .fold(0.0, f64::max);
    let (divisor, unit) = match max {
        m if m < 1e4 => (1.0, "ns"),
        m if m < 1e7 => (1e3, "µs"),
        m if m < 1e10 => (1e6, "ms"),
        _ => (1e9, "s"),
    };
    for band in lines.iter_mut().flat_map(|l| &mut l.points) {
        band.mean /= divisor;
        band.min /= divisor;
        band.max /= divisor;
    }
    unit
}

impl Axis {
    fn of(x: &XAxis) -> Axis {
        let labels = x.labels();
        let numbers: Option<Vec<f64>> = labels.iter().map(|l| l.parse::<f64>().ok()).collect();
        let categorical = numbers.is_none();
        let positions = numbers.unwrap_or_else(|| (0..labels.len()).map(|i| i as f64).collect());
        Axis {
            key: x.key().to_string(),
            labels,
            positions,
            categorical,
        }
    }

    /// Whether x counts threads (of the scaled role or of a model role).
    fn counts_threads(&self) -> bool {
        !self.categorical && (self.key == "threads" || self.key.ends_with(".threads"))
    }

    /// Whether x is what a perfectly scaling workload's throughput grows
    /// with: threads, or the CPUs they run on.
    fn scales(&self) -> bool {
        self.counts_threads() || (!self.categorical && self.key == XAxis::CPUS)
    }

    fn description(&self) -> String {
        match self.key.as_str() {
            "threads" => "threads of the scaled role".into(),
            XAxis::CPUS => "virtual CPUs".into(),
            key => key.to_string(),
        }
    }

    /// The smallest and largest position.
    fn span(&self) -> (f64, f64) {
        let positions = self.positions.iter().copied();
        let lo = positions.clone().fold(f64::INFINITY, f64::min);
        (lo, positions.fold(f64::NEG_INFINITY, f64::max))
    }

    /// The x range: every position plus a margin, so end points are not on the frame.
    fn range(&self) -> std::ops::Range<f64> {
        let (lo, hi) = self.span();
        let pad = if self.categorical || hi == lo {
            0.5
        } else {
            (hi - lo) * 0.05
        };
        (lo - pad)..(hi + pad)
    }

    fn coord(&self) -> XCoord {
        XCoord {
            linear: self.range().into(),
            ticks: self.positions.clone(),
        }
    }

    fn tick(&self, v: f64) -> String {
        if !self.categorical {
            return trimmed(v);
        }
        let index = v.round();
        let on_category = (v - index).abs() < 1e-6 && index >= 0.0;
        let label = self.labels.get(index as usize).filter(|_| on_category);
        label.cloned().unwrap_or_default()
    }
}

/// `v` with at most 3 decimals and no trailing zeros.
fn trimmed(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// `v` with a k/M/G suffix: rate tick labels that stay short.
fn si(v: f64) -> String {
    let (divisor, suffix) = match v.abs() {
        m if m >= 1e9 => (1e9, "G"),
        m if m >= 1e6 => (1e6, "M"),
        m if m >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    };
    format!("{}{suffix}", trimmed(v / divisor))
}

fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut items: Vec<&str> = items.collect();
    items.sort();
    items.dedup();
    items
}

/// A lock's colour, the same in every chart (matplotlib's tab10 palette).
fn lock_color(lock: LockKind) -> RGBColor {
    const PALETTE: [RGBColor; LockKind::ALL.len()] = [
        RGBColor(127, 127, 127), // tas: grey
        RGBColor(214, 39, 40),   // spinlock: red
        RGBColor(255, 127, 14),  // qspinlock: orange
        RGBColor(188, 189, 34),  // rwlock: olive
        RGBColor(140, 86, 75),   // qrwlock: brown
        RGBColor(148, 103, 189), // rwsem-fifo: purple
        RGBColor(227, 119, 194), // rwsem-xadd: pink
        RGBColor(31, 119, 180),  // rwsem: blue
        RGBColor(44, 160, 44),   // mutex: green
        RGBColor(23, 190, 207),  // percpu-rwsem: cyan
    ];
    let index = LockKind::ALL.iter().position(|&k| k == lock).unwrap_or(0);
    PALETTE[index]
}

/// Register the embedded font once per process; plotters' ab_glyph text has no
/// other font source.
fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
    });
    match ok {
        true => Ok(()),
        false => Err(Error::failed("the embedded DejaVu Sans font did not load")),
    }
}

fn draw_file<DB: DrawingBackend>(
    backend: DB,
    chart: &Chart,
    axis: &Axis,
    path: &Path,
) -> Result<()> {
    let root = backend.into_drawing_area();
    draw(&root, chart, axis).map_err(|e| Error::failed(format!("drawing {}: {e}", path.display())))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    axis: &Axis,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let title_style = (FONT, 22).into_text_style(root);
    // A tenth to spare: the estimate and the rasterised glyphs differ a little.
    let width = root.dim_in_pixel().0.saturating_sub(2 * MARGIN) * 9 / 10;
    let measure = |text: &str| {
        root.estimate_text_size(text, &title_style)
            .map_or(0, |s| s.0)
    };
    let mut area = root.clone();
    for line in wrap(&chart.title, width, measure) {
        area = area.titled(&line, title_style.clone())?;
    }
    let top = chart
        .lines
        .iter()
        .flat_map(|l| &l.points)
        .map(|b| b.max)
        .fold(0.0, f64::max);
    // Headroom above the highest point for the legend.
    let y_max = if top > 0.0 { top * 1.25 } else { 1.0 };
    let mut ctx = ChartBuilder::on(&area)
        .margin(MARGIN)
        .x_label_area_size(56)
        .y_label_area_size(96)
        .build_cartesian_2d(axis.coord(), 0.0..y_max)?;
    let x_tick = |v: &f64| axis.tick(*v);
    let y_tick = |v: &f64| if chart.si_ticks { si(*v) } else { trimmed(*v) };
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_label_formatter(&x_tick)
        .y_label_formatter(&y_tick)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .light_line_style(BLACK.mix(0.06))
        .draw()?;
    let x_range = axis.range();
    // Error bar caps: 2% of the x range wide.
    let cap = (x_range.end - x_range.start) * 0.02;
    for line in &chart.lines {
        draw_line(&mut ctx, line, cap)?;
    }
    for marker in &chart.markers {
        draw_marker(&mut ctx, marker, y_max)?;
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()?;
    root.present()
}

/// `text` in lines no wider than `width` pixels by `measure`, broken between
/// words (a word wider than `width` gets a line of its own).
fn wrap(text: &str, width: u32, measure: impl Fn(&str) -> u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if measure(&format!("{line} {word}")) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// A grey dashed vertical line across the chart, its label at its top.
fn draw_marker<'a, DB: DrawingBackend + 'a>(
    ctx: &mut Ctx<'a, DB>,
    marker: &Marker,
    y_max: f64,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = BLACK.mix(0.45).stroke_width(2);
    let ends = vec![(marker.x, 0.0), (marker.x, y_max)];
    ctx.draw_series(DashedLineSeries::new(ends, 6, 6, style))?;
    // At the top, in the headroom kept for the legend, clear of the data.
    let label = EmptyElement::at((marker.x, y_max))
        + Text::new(marker.label.clone(), (6, 6), (FONT, 15).into_font());
    ctx.draw_series(std::iter::once(label))?;
    Ok(())
}

/// A vertical min..max bar with caps `cap` wide (x units).
fn error_bar(band: &Band, cap: f64, style: ShapeStyle) -> [PathElement<(f64, f64)>; 3] {
    let Band { x, min, max, .. } = *band;
    let half = cap / 2.0;
    [
        PathElement::new(vec![(x, min), (x, max)], style),
        PathElement::new(vec![(x - half, min), (x + half, min)], style),
        PathElement::new(vec![(x - half, max), (x + half, max)], style),
    ]
}

type Ctx<'a, DB> = ChartContext<'a, DB, Cartesian2d<XCoord, RangedCoordf64>>;

/// The x coordinate: linear, with ticks exactly at the sweep's x values (1, 2,
/// 4, 8 threads rather than plotters' 2, 4, 6, 8) and no minor grid lines.
struct XCoord {
    linear: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for XCoord {
    type ValueType = f64;
    type FormatOption = NoDefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match hint.weight().allow_light_points() {
            true => Vec::new(),
            false => self.ticks.clone(),
        }
    }
}

impl ValueFormatter<f64> for XCoord {
    fn format(value: &f64) -> String {
        trimmed(*value)
    }
}

fn draw_line<'a, DB: DrawingBackend + 'a>(
    ctx: &mut Ctx<'a, DB>,
    line: &Line,
    cap: f64,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let color = lock_color(line.lock);
    let style = color.stroke_width(2);
    let points: Vec<(f64, f64)> = line.points.iter().map(|b| (b.x, b.mean)).collect();
    let series = if line.dashed {
        ctx.draw_series(DashedLineSeries::new(points.clone(), 10, 6, style))?
    } else {
        ctx.draw_series(LineSeries::new(points.clone(), style))?
    };
    // The legend sample: two segments, apart when the line is dashed.
    let gap = if line.dashed { 6 } else { 0 };
    series.label(&line.label).legend(move |(x, y)| {
        EmptyElement::at((x, y))
            + PathElement::new(vec![(0, 0), (8, 0)], style)
            + PathElement::new(vec![(8 + gap, 0), (22, 0)], style)
    });
    if !line.dashed {
        ctx.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    for band in line.points.iter().filter(|b| b.n > 1) {
        ctx.draw_series(error_bar(band, cap, style))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_wrap_between_words_within_the_width() {
        let chars = |t: &str| t.chars().count() as u32;
        assert_eq!(
            wrap("sim, 64 virtual CPUs of a machine", 12, chars),
            ["sim, 64", "virtual CPUs", "of a machine"]
        );
        assert_eq!(wrap("short title", 80, chars), ["short title"]);
        assert_eq!(wrap("a enormous b", 3, chars), ["a", "enormous", "b"]);
    }
}
