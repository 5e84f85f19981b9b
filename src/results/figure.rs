//! A figure of a run's report named by its dotted path in the report's JSON
//! (`roles.reclaim.ops_per_s`, `lock_stats.anon_vma.max_wait_ns`,
//! `memory.useful_ops_per_s`), plus a few derived ones: what a reproduction
//! scenario compares. A role or lock class the run did not have reads 0.

use super::{LockClassReport, RoleReport, RunReport, Verdict};
use crate::locks::stats::{Event, LockClass};
use crate::model::Role;
use serde_json::{Map, Value};

/// Figures computed from others: (path, what it is).
const DERIVED: [(&str, &str); 3] = [
    (
        "ctx_switches.total_per_s",
        "voluntary + involuntary switches/s",
    ),
    ("progress.livelock", "1 if the run was judged livelocked"),
    ("progress.starved", "1 if a role was judged starved"),
];

/// The figure at `path` of `report`; None if the path names no number.
pub fn of(report: &RunReport, path: &str) -> Option<f64> {
    match path {
        "ctx_switches.total_per_s" => {
            let c = report.ctx_switches;
            return Some(c.voluntary_per_s + c.involuntary_per_s);
        }
        "progress.livelock" => {
            return Some(flag(matches!(report.verdict, Verdict::Livelock { .. })));
        }
        "progress.starved" => return Some(flag(matches!(report.verdict, Verdict::Starved { .. }))),
        _ => {}
    }
    let json = serde_json::to_value(report).ok()?;
    match lookup(&json, path) {
        Some(v) => v.as_f64(),
        // A role or class the run did not have: nothing was done.
        None if lookup(&template(), path).is_some_and(Value::is_number) => Some(0.0),
        None => None,
    }
}

/// Whether `path` names a figure; Err holds what is allowed.
pub fn check(path: &str) -> Result<(), String> {
    if DERIVED.iter().any(|(p, _)| *p == path)
        || lookup(&template(), path).is_some_and(Value::is_number)
    {
        return Ok(());
    }
    Err(format!(
        "a number of the run report: roles.ROLE.FIELD ({}), lock_stats.CLASS.FIELD ({}), ctx_switches.*, memory.*, fairness.ROLE.*, duration_s, or {}",
        Role::names(),
        LockClass::ALL.map(LockClass::key).join(", "),
        DERIVED.map(|(p, _)| p).join(", ")
    ))
}

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

fn lookup<'v>(json: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(json, |v, key| v.get(key))
}

/// A report's JSON shape with every role and lock class present.
fn template() -> Value {
    let role = serde_json::to_value(RoleReport::default()).expect("plain data");
    let fairness = serde_json::to_value(super::Fairness::default()).expect("plain data");
    let mut class = LockClassReport::default();
    for e in Event::ALL {
        class.events.insert(e.key().into(), 0);
    }
    let class = serde_json::to_value(class).expect("plain data");
    let per = |v: &Value, names: &mut dyn Iterator<Item = &'static str>| {
        Value::Object(
            names
                .map(|n| (n.to_string(), v.clone()))
                .collect::<Map<_, _>>(),
        )
    };
    let mut out = Map::new();
    out.insert(
        "roles".into(),
        per(&role, &mut Role::ALL.iter().map(|r| r.name())),
    );
    out.insert(
        "fairness".into(),
        per(&fairness, &mut Role::ALL.iter().map(|r| r.name())),
    );
    out.insert(
        "lock_stats".into(),
        per(&class, &mut LockClass::ALL.iter().map(|c| c.key())),
    );
    for (key, v) in [
        (
            "ctx_switches",
            serde_json::to_value(super::CtxSwitches::default()),
        ),
        (
            "memory",
            serde_json::to_value(super::MemoryReport::default()),
        ),
        ("duration_s", Ok(Value::from(0.0))),
    ] {
        out.insert(key.into(), v.expect("plain data"));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_numbers_of_the_report_and_nothing_else() {
        for ok in [
            "roles.reclaim.ops_per_s",
            "roles.touch.latency_ns.max",
            "lock_stats.anon_vma.max_wait_ns",
            "lock_stats.i_mmap.events.handoffs",
            "ctx_switches.voluntary_per_s",
            "ctx_switches.total_per_s",
            "memory.useful_ops_per_s",
            "progress.livelock",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "roles.kswapd.ops_per_s",
            "roles.reclaim",
            "lock_stats.bkl.wait_share",
            "nope",
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_role_the_run_did_not_have_reads_zero() {
        let mut r: RunReport = serde_json::from_value(serde_json::json!({
            "schema": 2, "model": "m", "engine": "sim", "lock": "rwsem", "threads": 1,
            "duration_s": 1.0, "seed": 1, "overrides": [], "roles": {}, "lock_stats": {},
            "ctx_switches": {"voluntary_per_s": 2.0, "involuntary_per_s": 3.0},
            "fairness": {}, "memory": {"pages_reclaimed": 0, "pages_reclaimed_per_s": 0.0,
            "direct_reclaim_entries": 0, "useful_ops_per_s": 7.0}, "verdict": {"progress": "ok"}
        }))
        .unwrap();
        assert_eq!(of(&r, "roles.touch.ops_per_s"), Some(0.0));
        assert_eq!(of(&r, "memory.useful_ops_per_s"), Some(7.0));
        assert_eq!(of(&r, "ctx_switches.total_per_s"), Some(5.0));
        assert_eq!(of(&r, "progress.livelock"), Some(0.0));
        r.verdict = Verdict::Livelock { reason: "x".into() };
        assert_eq!(of(&r, "progress.livelock"), Some(1.0));
        assert_eq!(of(&r, "roles.nobody.ops_per_s"), None);
    }
}
