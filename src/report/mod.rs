//! Everything the user reads: tables, JSON/CSV, plots, comparisons. The report
//! layer formats; it never re-derives engine or lock state.

pub mod compare;
pub mod csv;
pub mod pick;
pub mod plot;
pub mod run;
pub mod run_text;
pub mod stats;
pub mod units;

pub use run::RunReport;
