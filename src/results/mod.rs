//! The plain data that crosses layers: what an engine reports about a run,
//! what a sweep is and holds, and the schema number of the files that carry
//! them. Engines fill these in, `metrics` computes their figures, `report`
//! formats them, `sweep` and `fileio` store them; nothing here does any of
//! that itself.

pub mod crosscheck;
pub mod figure;
pub mod reproduce;
pub mod run;
pub mod shard;
pub mod sweep;

pub use run::{
    CtxSwitches, Fairness, Latency, LockClassReport, MemoryReport, RoleReport, RunReport,
    SimReport, Verdict,
};
pub use shard::Shard;
pub use sweep::{EngineKind, PointRun, SweepEngine, SweepParams, SweepPoint, SweepResults, XAxis};

/// The JSON schema this build writes (run JSON, points, results.json).
///
/// History: 1, the first; 2 added `failed` and `gave_up` to every role. A
/// newer build bumps it on any change a reader must know about.
pub const SCHEMA: u32 = 2;

/// The oldest schema this build reads: a schema-1 file lacks only keys that
/// default to 0 (`failed`, `gave_up`).
pub const OLDEST_READABLE: u32 = 1;

/// Whether a file of schema `found` can be read; the error is the message's
/// tail ("schema 3 (this build reads schemas 1..=2)").
pub fn check_schema(found: u32) -> Result<(), String> {
    if (OLDEST_READABLE..=SCHEMA).contains(&found) {
        Ok(())
    } else {
        Err(format!(
            "schema {found} (this build reads schemas {OLDEST_READABLE}..={SCHEMA})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_schema_one_and_two_only() {
        assert!(check_schema(1).is_ok() && check_schema(2).is_ok());
        assert_eq!(
            check_schema(3).unwrap_err(),
            "schema 3 (this build reads schemas 1..=2)"
        );
        assert!(check_schema(0).is_err());
    }
}
