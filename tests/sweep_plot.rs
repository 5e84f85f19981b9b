//! Plots of a sweep: the data behind each chart, and the files.

mod sweep_fake;

use indicatif::ProgressBar;
use rmap_storm::Result;
use rmap_storm::locks::LockKind;
use rmap_storm::report::plot;
use rmap_storm::results::{
    EngineKind, RunReport, SimReport, SweepEngine, SweepParams, SweepPoint, SweepResults, XAxis,
};
use rmap_storm::sweep::{self, Runner};
use std::path::Path;

fn results(params: &SweepParams, out: &Path) -> SweepResults {
    let runner = sweep_fake::report;
    sweep::run(params, out, &runner, &ProgressBar::hidden())
        .unwrap()
        .results
}

#[test]
fn throughput_has_means_error_bars_and_the_linear_reference() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(&sweep_fake::params(), dir.path());
    let charts = plot::charts(&results, None).unwrap();
    let names: Vec<&str> = charts.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        ["throughput", "latency_p99", "ctx_switches", "wait_share"]
    );
    let throughput = &charts[0];
    assert!(
        throughput
            .title
            .contains("aim7-fork-storm (fake engine): reclaim throughput vs threads")
    );
    let labels: Vec<&str> = throughput.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        ["spinlock", "rwsem", "spinlock linear", "rwsem linear"]
    );

    // rwsem at 2 threads: seeds 7, 8, 9 add noise 14, 21, 28 to 1000 * 2^0.9.
    let base = 1000.0 * 2f64.powf(0.9);
    let band = throughput.lines[1].points[1];
    assert_eq!((band.x, band.n), (2.0, 3));
    assert!((band.mean - (base + 21.0)).abs() < 1e-9);
    assert!((band.min - (base + 14.0)).abs() < 1e-9 && (band.max - (base + 28.0)).abs() < 1e-9);

    // Linear: the 1-thread mean (1000 + 21) times x.
    let linear = &throughput.lines[3];
    assert!(linear.dashed);
    let ys: Vec<f64> = linear.points.iter().map(|b| b.mean).collect();
    assert_eq!(ys, [1021.0, 2042.0, 4084.0]);

    // p99 of 20000 * threads + seed % 5 ns: shown in µs.
    assert!(charts[1].y_label.ends_with("(µs)"), "{}", charts[1].y_label);
    assert!((charts[1].lines[0].points[2].mean - 80.003).abs() < 1e-9);
    // Wait share of anon_vma, in percent.
    assert!(charts[3].y_label.contains("anon_vma"));
    assert!((charts[3].lines[0].points[2].mean - 10.0).abs() < 1e-9);
}

#[test]
fn unknown_role_is_a_usage_error_naming_the_roles() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(&sweep_fake::params(), dir.path());
    let err = plot::charts(&results, Some("kswapd")).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert_eq!(
        err.to_string(),
        "--role kswapd: no run has this role (roles: fork-exit, reclaim)"
    );
    let chart = &plot::charts(&results, Some("fork-exit")).unwrap()[0];
    assert!(chart.title.contains("fork-exit throughput"));
}

#[test]
fn a_categorical_vary_axis_has_no_linear_reference() {
    let dir = tempfile::tempdir().unwrap();
    let params = SweepParams {
        x: XAxis::Vary {
            key: "workload.monitor.read_critical".into(),
            values: vec!["false".into(), "true".into()],
        },
        locks: vec![LockKind::Rwsem],
        repeat: 1,
        ..sweep_fake::params()
    };
    let results = results(&params, dir.path());
    let throughput = &plot::charts(&results, None).unwrap()[0];
    assert_eq!(throughput.lines.len(), 1);
    assert!(!throughput.title.contains("bars"));
    let xs: Vec<f64> = throughput.lines[0].points.iter().map(|b| b.x).collect();
    assert_eq!(xs, [0.0, 1.0]);
}

#[test]
fn plot_files_are_valid_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let results = results(&sweep_fake::params(), dir.path());
    let out = dir.path().join("plots");
    let written = plot::write_all(&results, &out, None).unwrap();
    assert_eq!(written.len(), 8);
    for path in &written {
        let bytes = std::fs::read(path).unwrap();
        match path.extension().unwrap().to_str().unwrap() {
            "png" => {
                assert!(
                    bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
                    "{}",
                    path.display()
                );
                let mut reader = png::Decoder::new(bytes.as_slice()).read_info().unwrap();
                let mut pixels = vec![0; reader.output_buffer_size()];
                let frame = reader.next_frame(&mut pixels).unwrap();
                assert_eq!((frame.width, frame.height), (1024, 640));
                // Not a blank canvas: lines and text put non-white pixels down.
                let inked = pixels.chunks(3).filter(|p| p != &[255, 255, 255]).count();
                assert!(inked > 5_000, "{}: {inked} inked pixels", path.display());
            }
            "svg" => {
                let text = String::from_utf8(bytes).unwrap();
                assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
                assert_eq!(
                    text.matches("<text").count(),
                    text.matches("</text>").count()
                );
                assert!(text.contains(" vs threads"), "{}", path.display());
                if path.ends_with("throughput.svg") {
                    assert!(text.contains("reclaim throughput") && text.contains("rwsem linear"));
                }
            }
            other => panic!("unexpected file type {other}"),
        }
    }
    // Nothing but the plots: no temp file left.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 8);

    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    assert_eq!(
        plot::write_all(&results, &file, None)
            .unwrap_err()
            .exit_code(),
        2
    );
}

/// The text of each `<text>` element of an SVG, trimmed, in order.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            Some(
                t.split_once('>')?
                    .1
                    .split_once("</text>")?
                    .0
                    .trim()
                    .to_string(),
            )
        })
        .collect()
}

/// The fake engine's reports as `engine` made them on `cpus` CPUs (the
/// point's own on the simulator, of the machine "Box").
fn on_cpus(engine: &'static str, cpus: u32) -> impl Fn(&SweepPoint) -> Result<RunReport> {
    move |point| {
        let mut report = sweep_fake::report(point)?;
        report.engine = engine.into();
        report.cpus = point.engine.cpus.unwrap_or(cpus);
        if engine == "sim" {
            report.sim = Some(SimReport {
                cpus: report.cpus,
                machine: "Box".into(),
                ..SimReport::default()
            });
        }
        Ok(report)
    }
}

fn results_of(params: &SweepParams, out: &Path, runner: &dyn Runner) -> SweepResults {
    sweep::run(params, out, runner, &ProgressBar::hidden())
        .unwrap()
        .results
}

#[test]
fn a_native_threads_axis_marks_the_online_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let runner = on_cpus("native", 2);
    let results = results_of(&sweep_fake::params(), &dir.path().join("a"), &runner);
    let charts = plot::charts(&results, None).unwrap();
    let mark = plot::Marker {
        x: 2.0,
        label: "2 online CPUs".into(),
    };
    for chart in &charts {
        assert!(
            chart
                .title
                .starts_with("aim7-fork-storm (native, 2 online CPUs): "),
            "{}",
            chart.title
        );
        assert_eq!(chart.markers, std::slice::from_ref(&mark), "{}", chart.name);
    }
    let out = dir.path().join("plots");
    plot::write_all(&results, &out, None).unwrap();
    let texts = svg_texts(&std::fs::read_to_string(out.join("throughput.svg")).unwrap());
    assert!(texts[0].contains("(native, 2 online CPUs)"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "2 online CPUs"), "{texts:?}");

    // CPUs beyond the largest thread count: named in the title, not marked.
    let runner = on_cpus("native", 64);
    let results = results_of(&sweep_fake::params(), &dir.path().join("b"), &runner);
    let throughput = &plot::charts(&results, None).unwrap()[0];
    assert!(throughput.title.contains("(native, 64 online CPUs)"));
    assert!(throughput.markers.is_empty());
}

#[test]
fn a_cpus_axis_names_the_virtual_cpus_and_gets_the_linear_reference() {
    let dir = tempfile::tempdir().unwrap();
    let params = SweepParams {
        x: XAxis::Cpus(vec![1, 2, 4]),
        threads: Some(4),
        engine: SweepEngine {
            kind: EngineKind::Sim,
            preempt: Some("voluntary".into()),
            ..SweepEngine::default()
        },
        ..sweep_fake::params()
    };
    let results = results_of(&params, dir.path(), &on_cpus("sim", 0));
    let charts = plot::charts(&results, None).unwrap();
    let throughput = &charts[0];
    assert!(
        throughput.title.starts_with(
            "aim7-fork-storm (sim, 1-4 virtual CPUs of Box): reclaim throughput vs cpus"
        ),
        "{}",
        throughput.title
    );
    assert_eq!(throughput.x_label, "virtual CPUs");
    let labels: Vec<&str> = throughput.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        ["spinlock", "rwsem", "spinlock linear", "rwsem linear"]
    );
    let xs: Vec<f64> = throughput.lines[0].points.iter().map(|b| b.x).collect();
    assert_eq!(xs, [1.0, 2.0, 4.0], "a numeric axis");
    assert!(charts.iter().all(|c| c.markers.is_empty()), "x is the CPUs");

    // A fixed CPU count on a threads axis marks it as virtual.
    let fixed = SweepParams {
        x: XAxis::Threads(vec![1, 2, 4]),
        threads: None,
        engine: SweepEngine {
            cpus: Some(2),
            ..params.engine.clone()
        },
        ..params
    };
    let results = results_of(&fixed, &dir.path().join("fixed"), &on_cpus("sim", 0));
    let throughput = &plot::charts(&results, None).unwrap()[0];
    assert!(throughput.title.contains("(sim, 2 virtual CPUs of Box)"));
    let marks: Vec<&str> = throughput
        .markers
        .iter()
        .map(|m| m.label.as_str())
        .collect();
    assert_eq!(marks, ["2 virtual CPUs"]);
}
