//! Everything the user reads: tables, CSV, plots, comparisons of the plain
//! data in [`crate::results`]. The report layer formats; it never re-derives
//! engine or lock state, and never imports the sweep or engine layers above it.

pub mod bootstrap;
pub mod compare;
pub mod crosscheck;
pub mod csv;
pub mod pick;
pub mod plot;
pub mod reproduce;
pub mod run_text;
pub mod stats;
pub mod units;
