//! `rmap-storm crosscheck` on the real binary, kept short (one model, one
//! kind, one CPU, one repeat, 50 ms): the table has its shape, its sim
//! column is what `run --engine sim` gives for the same point and seed, its
//! error is computed from its own two columns, `--readme` replaces only the
//! block between the markers, and bad input is one line and exit 2 with the
//! file untouched. Nothing here asserts that the error is small: that is
//! what the table is for.

mod common;

use common::text;
use rmap_storm::report::units::fmt_rate;
use rmap_storm::results::RunReport;
use std::process::Output;

const BEGIN: &str = "<!-- crosscheck:begin -->";
const END: &str = "<!-- crosscheck:end -->";

fn bin(args: &[&str]) -> Output {
    common::rmap_storm("", args)
}

/// The quick cross-check's arguments, with `extra`'s flags replacing the
/// defaults of the same name (clap refuses a flag given twice).
fn quick<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let defaults = [
        ("--machine", "models/machines/default.toml"),
        ("--models", "models/synchro.toml"),
        ("--locks", "rwsem"),
        ("--cpus", "1"),
        ("--repeats", "1"),
        ("--duration", "50ms"),
    ];
    let mut args = vec!["crosscheck"];
    for (flag, value) in defaults {
        if !extra.contains(&flag) {
            args.extend([flag, value]);
        }
    }
    args.extend_from_slice(extra);
    args
}

/// The cells of the table's only data row.
fn data_row(table: &str) -> Vec<String> {
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| synchro"))
        .collect();
    assert_eq!(rows.len(), 1, "one point, one row:\n{table}");
    rows[0]
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// "60.3k/s ±0%" -> ops/s (to the printed precision).
fn rate(cell: &str) -> f64 {
    let r = cell
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches("/s");
    let (num, scale) = match r.chars().last().unwrap() {
        'k' => (&r[..r.len() - 1], 1e3),
        'M' => (&r[..r.len() - 1], 1e6),
        _ => (r, 1.0),
    };
    num.parse::<f64>().unwrap() * scale
}

/// The quick point's monitor ops/s as `run --engine sim` gives it on
/// `machine`, with the cross-check's seed and preemption model.
fn sim_rate(machine: &str) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sim.json");
    let run = bin(&[
        "run",
        "models/synchro.toml",
        "--engine",
        "sim",
        "--preempt",
        "user",
        "--cpus",
        "1",
        "--threads",
        "1",
        "--machine",
        machine,
        "--lock",
        "rwsem",
        "--duration",
        "50ms",
        "--seed",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let report: RunReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let sim = report.roles["monitor"].ops_per_s;
    assert!(sim > 0.0);
    sim
}

#[test]
fn the_table_holds_both_engines_own_figures_and_their_error() {
    let out = bin(&quick(&[]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let header = "| model | role (ops/s) | CPUs | kind | native | sim | error | 95% interval | other roles |";
    assert!(table.lines().any(|l| l == header), "{table}");
    assert!(
        table.starts_with("Made by `rmap-storm crosscheck --machine"),
        "{table}"
    );
    let cells = data_row(&table);
    assert_eq!(cells[..4], ["synchro", "monitor", "1", "rwsem"], "{table}");
    // The sim column is the simulator's own figure for this point and seed
    // (deterministic), formatted as the table formats rates, under the
    // cross-check's default preemption model: user-space threads.
    assert!(table.contains("preempt user"), "{table}");
    assert_eq!(
        cells[5].split_whitespace().next().unwrap(),
        fmt_rate(sim_rate("models/machines/default.toml")),
        "{table}"
    );
    // The native column ran for real: some reads done, not the sim's figure.
    let native = rate(&cells[4]);
    assert!(native > 0.0, "{table}");
    // The error is sim / native - 1 of the two columns (to their rounding).
    let error: f64 = cells[6].trim_end_matches('%').parse().unwrap();
    let want = 100.0 * (rate(&cells[5]) / native - 1.0);
    assert!(
        (error - want).abs() <= 1.0 + want.abs() * 0.01,
        "error {error}% vs {want:.1}% from the columns:\n{table}"
    );
    let within = error.abs() <= 30.0;
    assert!(
        table.contains(&format!("{} of 1 rows within ±30%", u32::from(within))),
        "{table}"
    );
    // One repeat a side: every resample is the run itself, so the 95%
    // interval is the error alone.
    let e = cells[6].trim_end_matches('%');
    assert_eq!(cells[7], format!("{e}..{e}%"), "{table}");
    // synchro's other roles, from the same runs, by name, each with its own
    // error: not counted in the line above.
    let others: Vec<(&str, &str)> = cells[8]
        .split(", ")
        .map(|c| c.split_once(' ').unwrap())
        .collect();
    let names: Vec<&str> = others.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["mprotect", "munmap"], "{table}");
    for (_, e) in others {
        let signed = e.starts_with(['+', '-']) && e.ends_with('%');
        assert!(
            signed && e[1..e.len() - 1].parse::<f64>().is_ok(),
            "{table}"
        );
    }
}

#[test]
fn readme_gets_the_table_between_its_markers_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    let before = format!("# Title\n\ntext above\n{BEGIN}\nstale table\n{END}\ntext below\n");
    std::fs::write(&readme, &before).unwrap();
    let out = bin(&quick(&["--readme", readme.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(&readme).unwrap();
    let want = format!(
        "# Title\n\ntext above\n{BEGIN}\n{}{END}\ntext below\n",
        text(&out.stdout)
    );
    assert_eq!(after, want);
    assert!(!after.contains("stale table"));
}

/// A recalibrated row carries its own profile's figures, each with its
/// unit, the header says which profile ran it, and `--profiles` writes
/// that profile: the simulator on it gives the row's sim column again.
#[test]
fn a_recalibrated_row_shows_and_writes_the_profile_it_ran_on() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().to_str().unwrap();
    let out = bin(&quick(&["--recalibrate", "1", "--profiles", profiles]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.contains("virtual CPUs of the row's own profile, calibrated just before its native runs (1 trial a figure, the model's storm on the row's CPUs; the keys calibrate does not measure from `models/machines/default.toml`)"),
        "{table}"
    );
    let cells = data_row(&table);
    assert_eq!(cells.len(), 14, "{cells:?}");
    // visit, walk start (0 where the one-vma walks took no more than their
    // visit), touch, idle wake, interrupts every.
    let wanted = [
        (["ns", "us"], 0.0),
        (["ns", "us"], -1.0),
        (["ns", "us"], 0.0),
        (["us", "ms"], 0.0),
        (["us", "ms"], 0.0),
    ];
    for (cell, (units, above)) in cells[9..].iter().zip(wanted) {
        let number = cell.trim_end_matches(char::is_alphabetic);
        assert!(
            units.iter().any(|u| cell.ends_with(u)),
            "{cell}: want {units:?}"
        );
        assert!(number.parse::<f64>().is_ok_and(|x| x > above), "{cell}");
    }
    let file = dir.path().join("synchro-1cpu-rwsem.toml");
    let profile = std::fs::read_to_string(&file).unwrap();
    assert!(
        profile.starts_with("# Written by `rmap-storm crosscheck --recalibrate 1`"),
        "{profile}"
    );
    assert!(profile.contains("# measured: "), "{profile}");
    // The row's one CPU ran the storm that timed the visit, for 2 s.
    let visit = profile
        .lines()
        .find(|l| l.starts_with("vma_visit_ns = "))
        .unwrap_or_default();
    let pinned = visit
        .split("2s a trial pinned to CPU ")
        .nth(1)
        .unwrap_or("");
    assert!(
        !pinned.is_empty() && pinned.chars().all(|c| c.is_ascii_digit()),
        "one CPU, 2 s: {visit}"
    );
    assert_eq!(
        cells[5].split_whitespace().next().unwrap(),
        fmt_rate(sim_rate(file.to_str().unwrap())),
        "{table}"
    );
}

/// The quick cross-check with 3 repeats, `extra` and `--json`: its table
/// and the JSON it wrote.
fn three_repeats_with_json(extra: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("check.json");
    let mut args = extra.to_vec();
    args.extend(["--repeats", "3", "--json", json.to_str().unwrap()]);
    let out = bin(&quick(&args));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (text(&out.stdout), v)
}

/// The median of a JSON list of one figure per repeat, 3 repeats.
fn median_of_three(side: &serde_json::Value) -> f64 {
    let mut xs: Vec<f64> = side
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(xs.len(), 3, "a figure per repeat: {side}");
    xs.sort_by(f64::total_cmp);
    xs[1]
}

/// `--json` holds every repeat's figures, both engines and every role,
/// whose medians are the table's columns.
#[test]
fn json_holds_the_repeats_behind_the_table() {
    let (table, v) = three_repeats_with_json(&[]);
    let cells = data_row(&table);
    let row = &v["rows"][0];
    assert_eq!(row["lock"], "rwsem");
    assert_eq!(row["seeds"], serde_json::json!([2, 3, 4]));
    for (cell, side) in [
        (&cells[4], "native_ops_per_s"),
        (&cells[5], "sim_ops_per_s"),
    ] {
        assert_eq!(
            cell.split_whitespace().next().unwrap(),
            fmt_rate(median_of_three(&row[side])),
            "{side}: {table}"
        );
    }
    for role in ["mprotect", "munmap"] {
        median_of_three(&row["others"][role]["native_ops_per_s"]);
    }
    assert_eq!(v["per_repeat"], false);
    assert_eq!(row["calibrated"], serde_json::json!([]));
}

/// `--control` runs the native side again after the simulated one: the
/// table shows that second median and its error against the first, counts
/// the rows where the machine met the bound against itself, and the JSON
/// holds the second pass's repeats.
#[test]
fn a_control_shows_the_native_side_against_itself() {
    let (table, v) = three_repeats_with_json(&["--control"]);
    assert!(
        table.contains("| 95% interval | native again | its error | other roles |"),
        "{table}"
    );
    let cells = data_row(&table);
    assert_eq!(v["control"], true);
    let again = median_of_three(&v["rows"][0]["native_again_ops_per_s"]);
    assert_eq!(
        cells[8].split_whitespace().next().unwrap(),
        fmt_rate(again),
        "{table}"
    );
    let own = 100.0 * (rate(&cells[8]) / rate(&cells[4]) - 1.0);
    let shown: f64 = cells[9].trim_end_matches('%').parse().unwrap();
    assert!((own - shown).abs() <= 1.5, "{own} against {shown}: {table}");
    let counted = usize::from(shown.abs() <= 30.0);
    assert!(
        table.contains(&format!(
            "the native side against itself within ±30% in {counted}"
        )),
        "{table}"
    );
}

/// Calibrated every repeat, a row runs on as many profiles as it has
/// repeats, writes each under its seed, and says its figures are their
/// medians; each repeat's simulated run is the simulator on that repeat's
/// profile and seed.
#[test]
fn calibrated_every_repeat_a_row_writes_a_profile_per_seed() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().to_str().unwrap();
    let out = bin(&quick(&[
        "--recalibrate",
        "1",
        "--recalibrate-every",
        "repeat",
        "--repeats",
        "2",
        "--profiles",
        profiles,
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.contains("virtual CPUs of each repeat's own profile, calibrated just before its native run (1 trial a figure"),
        "{table}"
    );
    assert!(
        text(&out.stderr).contains("; calibrated (medians): visit "),
        "{}",
        text(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "synchro-1cpu-rwsem-seed2.toml",
            "synchro-1cpu-rwsem-seed3.toml"
        ]
    );
    let first = dir.path().join(&names[0]);
    let profile = std::fs::read_to_string(&first).unwrap();
    assert!(
        profile.contains("just before the native run (seed 2)"),
        "{profile}"
    );
}

#[test]
fn bad_input_is_one_line_exit_2_and_the_readme_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let readme = dir.path().join("README.md");
    let no_end = format!("# Title\n{BEGIN}\nold\n");
    std::fs::write(&readme, &no_end).unwrap();
    let missing = dir.path().join("none.toml");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--readme".into(), readme.display().to_string()],
            "no '<!-- crosscheck:begin -->' ... '<!-- crosscheck:end -->' markers",
        ),
        (
            vec!["--machine".into(), missing.display().to_string()],
            "run `rmap-storm calibrate",
        ),
        (
            vec!["--locks".into(), "bkl".into()],
            "--locks: unknown lock kind 'bkl'",
        ),
        (
            vec!["--cpus".into(), "0".into()],
            "--cpus: 0 is out of range",
        ),
        (
            vec!["--cpus".into(), "4096".into()],
            "native runs pin CPUs 0-4095",
        ),
        (
            vec!["--repeats".into(), "0".into()],
            "--repeats: 0 is out of range",
        ),
        (
            vec!["--duration".into(), "soon".into()],
            "--duration: 'soon'",
        ),
        (
            vec!["--recalibrate".into(), "0".into()],
            "--recalibrate: 0 is out of range (allowed: 1..=1000",
        ),
        (
            vec!["--recalibrate".into(), "1001".into()],
            "--recalibrate: 1001 is out of range",
        ),
        (
            vec!["--profiles".into(), dir.path().display().to_string()],
            "--profiles: needs --recalibrate N",
        ),
        (
            vec![
                "--json".into(),
                missing.join("x.json").display().to_string(),
            ],
            "does not exist",
        ),
        (
            vec!["--recalibrate-every".into(), "repeat".into()],
            "--recalibrate-every: needs --recalibrate N",
        ),
        (
            vec![
                "--recalibrate".into(),
                "1".into(),
                "--recalibrate-every".into(),
                "often".into(),
            ],
            "invalid value 'often' for '--recalibrate-every <WHEN>'",
        ),
        (
            vec![
                "--recalibrate".into(),
                "1".into(),
                "--profiles".into(),
                missing.display().to_string(),
            ],
            "is not a folder (allowed: an existing, writable folder)",
        ),
    ];
    for (extra, want) in cases {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let out = bin(&quick(&extra));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: one line: {err}");
        assert!(err.contains(want), "{extra:?}: want {want:?}, got {err}");
        assert!(out.stdout.is_empty(), "{extra:?}: nothing ran");
    }
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), no_end);
}
