//! Figures computed from what engines record: engine-agnostic, tested on fixed
//! inputs.

pub mod overlap;
pub mod verdict;
