//! rmap-storm: a model of the Linux reverse map and the locks that guard it.
//!
//! Data flows one way: a model file ([`model`]) builds a world ([`rmap`]); an
//! engine runs roles over it taking the lock under test ([`locks`]); the run's
//! figures go to [`metrics`] and are printed by [`report`]; [`cli`] wires the
//! subcommands; [`torture`] stresses one lock on its own, locktorture style.

pub mod cli;
pub mod engine;
pub mod error;
pub mod locks;
pub mod metrics;
pub mod mode;
pub mod model;
pub mod report;
pub mod rmap;
pub mod sweep;
pub mod torture;

pub use error::{Error, Result};
