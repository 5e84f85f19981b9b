//! Everything the user reads: tables, JSON/CSV, plots, comparisons. The report
//! layer formats; it never re-derives engine or lock state.

pub mod run;

pub use run::RunReport;
